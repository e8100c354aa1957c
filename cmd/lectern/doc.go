// Command lectern serves every course site of a deployment from one binary,
// and administers them (sites, users, roles, keys, migrations, the demo seed).
//
// It owns the command line: flags and environment variables, the commands
// and their help, and the demo banner. The wiring (stores → handlers →
// echo, start-up and shutdown) is internal/server. With no configuration it
// runs the embedded default (SQLite and an in-memory cache under ./data)
// with the demo seed of DESIGN §7.
package main
