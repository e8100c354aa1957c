-- +goose Up
-- 0006_client_resource_server: an operator may mark a confidential client as
-- one of the site's resource servers, which may introspect the access tokens
-- of other clients (RFC 7662 §4). Every other client introspects only its own
-- tokens. Never set by registration or a Client ID Metadata Document.
ALTER TABLE clients ADD COLUMN resource_server boolean NOT NULL DEFAULT false;
