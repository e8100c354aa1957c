// Package jsonx holds the JSON checks Lectern's endpoints share beyond
// encoding/json: a document that repeats a member name is refused rather
// than read with "last one wins", which another parser in front of Lectern
// (a proxy, a firewall) may read differently.
package jsonx
