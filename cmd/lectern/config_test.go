package main

import (
	"io"
	"testing"
)

// --metrics-addr "" serves no metrics; LECTERN_METRICS_ADDR set to "" must
// do the same (an operator turning metrics off in a unit file or a
// container spec has only the environment), not fall back to the default
// address.
func TestMetricsAddrFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"unset", nil, nil, "127.0.0.1:9090"},
		{"set", map[string]string{"LECTERN_METRICS_ADDR": "127.0.0.1:9191"}, nil, "127.0.0.1:9191"},
		{"set to empty", map[string]string{"LECTERN_METRICS_ADDR": ""}, nil, ""},
		{"empty flag", nil, []string{"--metrics-addr", ""}, ""},
		{"flag beats environment", map[string]string{"LECTERN_METRICS_ADDR": ""}, []string{"--metrics-addr", "127.0.0.1:9292"}, "127.0.0.1:9292"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			env := &cmdEnv{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { v, _ := lookup(k); return v }, lookupEnv: lookup}
			fs := newCmdFlags(env, "serve", help{})
			var cfg config
			cfg.serving(fs)
			if err := fs.parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if cfg.MetricsAddr != tc.want {
				t.Fatalf("metrics address %q; want %q", cfg.MetricsAddr, tc.want)
			}
		})
	}
}
