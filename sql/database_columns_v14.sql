-- The columns of database.sql from PostgreSQL 14 on.
sessions
