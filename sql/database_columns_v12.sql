-- The columns of database.sql that PostgreSQL 12 and 13 lack: `sessions` (PG 14).
NULL::bigint AS sessions
