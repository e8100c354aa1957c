// Command lectern serves every course site of a deployment from one binary,
// and administers them (sites, users, roles, keys, migrations, the demo seed).
//
// It is the only place where everything is wired together: flags and
// environment → stores → handlers → echo. With no configuration it runs the
// embedded default (SQLite and an in-memory cache under ./data) with the demo
// seed of DESIGN §7.
package main
