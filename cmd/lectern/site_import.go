package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/internal/server"
)

// errLinesRefused makes `site import` exit 1 after it printed its report.
var errLinesRefused = errors.New("some lines were not applied (see the report above)")

func runSiteImport(ctx context.Context, env *cmdEnv, args []string) error {
	var (
		file           string
		update, asJSON bool
		workers        int
	)
	return adminCommand(ctx, env, "site import", help{
		usage: "lectern site import --file sites.jsonl [--update] [--json]",
		about: "Create many sites from a JSON Lines file, one site per line: " +
			`{"slug":"s","name":"N","origin":"https://s.example.com","variant":"A","settings":{"aliases":[],"id_tokens":true,"mcp_beta":false,"cimd_open":false,"description":"","locale":"en","key_rotation_days":90}}. ` +
			"Idempotent by slug: a line whose site exists with the same content is unchanged; with other content it is a conflict " +
			"(overwritten only with --update). Bad lines are refused with their reason and the rest go on; the exit status is 1 " +
			"if any line was refused or in conflict. Key rings are generated in parallel and sites stored in batches.",
		examples: []string{"lectern site import --file sites.jsonl --json > report.json"},
	}, args,
		func(fs *cmdFlags) {
			fs.StringVar(&file, "file", "", "JSON Lines file of sites ('-': standard input)")
			fs.BoolVar(&update, "update", false, "overwrite existing sites whose line differs")
			fs.BoolVar(&asJSON, "json", false, "print one JSON report: a result per line")
			fs.IntVar(&workers, "workers", runtime.NumCPU(), "goroutines generating key rings")
			fs.require("file")
		},
		func(a *server.App, _ *cmdFlags) error {
			lines, err := readImportFile(file)
			if err != nil {
				return err
			}
			if err := checkKEK(ctx, a); err != nil {
				return err
			}
			opts := &platform.ImportOptions{Update: update, Workers: workers}
			if bar := progressBar(env.stderr, len(lines)); bar != nil {
				opts.Progress = func(done int) { _ = bar.Set(done) }
				defer func() { _ = bar.Finish() }()
			}
			results, err := a.Platform.ImportSites(ctx, lines, opts)
			if perr := printImport(env.stdout, asJSON, results); perr != nil && err == nil {
				err = perr
			}
			if err != nil {
				return err
			}
			for _, r := range results {
				if r.Failed() {
					return errLinesRefused
				}
			}
			return nil
		})
}

func readImportFile(file string) ([]platform.ImportInput, error) {
	if file == "" {
		return nil, errors.New("--file is required (a JSON Lines file, or - for standard input)")
	}
	var r io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	return platform.ReadImportLines(r)
}

// progressBar draws on stderr only when it is a terminal: logs and CI
// output get the report alone.
func progressBar(w io.Writer, n int) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if !ok || n == 0 || !isatty.IsTerminal(f.Fd()) {
		return nil
	}
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(f), progressbar.OptionSetDescription("importing sites"),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("sites"),
		progressbar.OptionClearOnFinish())
}

// importReport is the --json form.
type importReport struct {
	Created   int                     `json:"created"`
	Unchanged int                     `json:"unchanged"`
	Updated   int                     `json:"updated"`
	Conflict  int                     `json:"conflict"`
	Refused   int                     `json:"refused"`
	Lines     []platform.ImportResult `json:"lines"`
}

func printImport(w io.Writer, asJSON bool, results []platform.ImportResult) error {
	rep := importReport{Lines: results}
	if rep.Lines == nil {
		rep.Lines = []platform.ImportResult{}
	}
	for _, r := range results {
		switch r.Status {
		case platform.ImportCreated:
			rep.Created++
		case platform.ImportUnchanged:
			rep.Unchanged++
		case platform.ImportUpdated:
			rep.Updated++
		case platform.ImportConflict:
			rep.Conflict++
		case platform.ImportRefused:
			rep.Refused++
		}
	}
	if asJSON {
		return json.NewEncoder(w).Encode(rep)
	}
	for _, r := range results {
		if r.Failed() {
			what := r.Status
			if r.Slug != "" {
				what += " " + r.Slug
			}
			fmt.Fprintf(w, "line %d: %s: %s\n", r.Line, what, r.Reason)
		}
	}
	_, err := fmt.Fprintf(w, "%d created, %d unchanged, %d updated, %d in conflict, %d refused\n",
		rep.Created, rep.Unchanged, rep.Updated, rep.Conflict, rep.Refused)
	return err
}
