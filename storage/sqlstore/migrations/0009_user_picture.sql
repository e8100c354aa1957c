-- +goose Up
-- 0009_user_picture: the picture a person uploads on their account page
-- (issue 13). Its bytes live in the upload store under the platform's area
-- (accounts are platform-wide); the row names the file, "<key>.png" or
-- "<key>.jpg", empty while the person has none (claims then point at the
-- generated avatar). picture stays the provider's URL, if any.
ALTER TABLE users ADD COLUMN picture_file text NOT NULL DEFAULT '';
