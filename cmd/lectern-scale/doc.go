// Command lectern-scale is the driver of `make bench-scale`: for each site
// count it imports that many sites into a fresh PostgreSQL database with
// `lectern site import`, starts `lectern serve` on it and measures start-up
// time, memory (idle, after one request to every site, after a load run),
// first-request latency of cold sites, and latency and throughput of
// discovery, JWKS, a code flow and userinfo at randomly chosen sites. It
// prints the Markdown table of docs/SCALE.md.
//
// It drives a real server over loopback only, and stops only the processes
// it started. It imports storage/sqlstore and authserver/password (to set
// up users, roles and clients directly) and internal/oauthtest (to sign in
// and consent like a browser); never internal/server or echo.
package main
