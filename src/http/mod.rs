//! The HTTP side: the request as sent, keep-alive HTTP/1.1 connections, the responses read
//! off them, and the closed-loop burst that drives them.

pub mod connection;
pub mod error_answer;
pub mod items;
pub mod load;
pub mod open_loop;
pub mod request;
mod response;
pub mod rotation;
pub mod template;
