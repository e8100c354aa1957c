// Package server is the wiring of lectern: Open turns a Config into the
// opened stores, cache, key manager and platform operations (App), which
// every CLI command uses; New builds every handler over an App and mounts
// them on one echo router behind the request id, Host → Site, recovery,
// metrics, body-limit, security-header and access-log middleware; Serve
// runs it until its context ends (change broadcasts first, housekeeping
// while serving, a graceful shutdown at the end); ServeOps runs the
// metrics listener (/metrics, the probes, pprof), which is never a site's
// origin.
//
// It is the only package besides adminapi that imports echo, and the only
// one that imports every handler package. Nothing imports it but package
// main (cmd/lectern) and tests: flags, environment variables and the CLI
// live in cmd/lectern, the end-to-end tests in integration/.
package server
