// Package s3files is the adminapi.FileStore of a fleet: uploaded files in
// an S3-compatible object store (AWS S3, MinIO, Ceph RGW, R2, ...) through
// the minio-go client, so every replica serves what any replica stored.
//
// Objects are named "<prefix><site id>/<key>" in one bucket per deployment
// and stay private: the public reads go through GET /uploads/{key} on the
// site's own origin, which checks the row in storage first. The bucket must
// exist (New checks); lifecycle, versioning and encryption at rest are the
// bucket's settings, not ours.
//
// The store is chosen by URL (--files-url, LECTERN_FILES_URL):
//
//	s3://<bucket>[/<prefix>]?endpoint=<host[:port]>&region=<r>&insecure=1&path_style=1
//
// Credentials come from the environment the usual way (AWS_ACCESS_KEY_ID /
// AWS_SECRET_ACCESS_KEY, MINIO_ACCESS_KEY / MINIO_SECRET_KEY, the shared
// AWS credentials file, then the instance's IAM role), never from the URL.
package s3files
