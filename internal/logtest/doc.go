// Package logtest gives a test a logger whose lines show in the test's
// output (t.Output(), STYLE.md) and stay searchable, for tests that assert
// what was logged.
//
// It is test support only; production code never imports it. It imports
// nothing of Lectern.
package logtest
