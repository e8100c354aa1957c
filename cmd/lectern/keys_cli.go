package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/tenant"
)

// keyStatusJSON is one line of `keys status --json`.
type keyStatusJSON struct {
	Slug string `json:"slug"`
	keys.KeyStatus
	Due bool `json:"due"`
}

func runKeysStatus(ctx context.Context, env *cmdEnv, args []string) error {
	var (
		due, asJSON bool
		within      time.Duration
		ref         string
	)
	return adminCommand(ctx, env, "keys status", help{
		usage: "lectern keys status [--site S] [--due [--within 24h]] [--json]",
		about: "Show each site's signing key: when it activated, which key-encryption key sealed it, when the scheduler " +
			"rotates it, and a next key being published. --due lists only the sites whose rotation is due (within --within).",
		examples: []string{"lectern keys status --due --within 168h --json"},
	}, args,
		func(fs *cmdFlags) {
			fs.StringVar(&ref, "site", "", "one site: its slug, or its ID in decimal")
			fs.BoolVar(&due, "due", false, "only sites whose rotation is due")
			fs.DurationVar(&within, "within", 0, "with --due: also those due within this time")
			fs.BoolVar(&asJSON, "json", false, "print one JSON array")
		},
		func(a *server.App, _ *cmdFlags) error {
			var ids []tenant.ID
			switch {
			case ref != "":
				s, err := siteByRef(ctx, a, ref)
				if err != nil {
					return err
				}
				ids = []tenant.ID{s.ID}
			case due:
				rows, err := a.Store.DueSiteKeys(ctx, time.Now().Add(within), 100_000)
				if err != nil {
					return err
				}
				for _, k := range rows {
					ids = append(ids, k.SiteID)
				}
			default:
				for after := tenant.ID(0); ; {
					page, err := a.Store.ListSites(ctx, after, 500)
					if err != nil {
						return err
					}
					for _, s := range page {
						ids = append(ids, s.ID)
					}
					if len(page) < 500 {
						break
					}
					after = page[len(page)-1].ID
				}
			}
			cutoff := time.Now().Add(within)
			out := []keyStatusJSON{}
			for _, id := range ids {
				st, err := a.Keys.Status(ctx, id)
				if err != nil {
					return err
				}
				site, err := a.Store.SiteByID(ctx, id)
				if err != nil {
					return err
				}
				isDue := st.RotateAt != nil && !st.RotateAt.After(cutoff)
				if due && !isDue {
					continue
				}
				out = append(out, keyStatusJSON{Slug: site.Slug, KeyStatus: *st, Due: isDue})
			}
			if asJSON {
				return json.NewEncoder(env.stdout).Encode(out)
			}
			tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SITE\tKID\tKEK\tACTIVATED\tROTATES\tNEXT KEY")
			for _, st := range out {
				rotates := "started"
				if st.RotateAt != nil {
					rotates = st.RotateAt.Format(time.RFC3339)
					if st.Due {
						rotates += " (due)"
					}
				}
				next := "-"
				if st.Pending != "" {
					next = st.Pending + " from " + st.PendingActivates.Format(time.RFC3339)
				}
				kek := st.KEKID
				if kek == "" {
					kek = "(v1)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", st.Slug, st.KID, kek, st.ActivatedAt.Format(time.RFC3339), rotates, next)
			}
			return tw.Flush()
		})
}

func runKEK(ctx context.Context, env *cmdEnv, args []string) error {
	_, args, err := subcommand(env, "kek", []string{"rotate"}, args)
	if err != nil {
		return err
	}
	var asJSON bool
	return adminCommand(ctx, env, "kek rotate", help{
		usage: "lectern kek rotate [--json]   (with LECTERN_KEK=<new> LECTERN_KEK_PREVIOUS=<old>)",
		about: "Re-seal every site's signing keys under the current key-encryption key (LECTERN_KEK). First give every " +
			"replica the new key as LECTERN_KEK and the old one as LECTERN_KEK_PREVIOUS (they open rows sealed under either), " +
			"then run this, then drop LECTERN_KEK_PREVIOUS. It can run beside serving replicas and again after an interruption.",
		examples: []string{"LECTERN_KEK=$(cat new.kek) LECTERN_KEK_PREVIOUS=$(cat old.kek) lectern kek rotate"},
	}, args,
		func(fs *cmdFlags) { fs.BoolVar(&asJSON, "json", false, "print the result as JSON") },
		func(a *server.App, _ *cmdFlags) error {
			rep, err := a.Keys.Reseal(ctx)
			if err != nil {
				return err
			}
			if err := printResult(env.stdout, asJSON, rep, fmt.Sprintf("key-encryption key %s: %d keys re-sealed, %d already current, %d open under no configured key",
				rep.KEKID, rep.Resealed, rep.Current, rep.Unopenable)); err != nil {
				return err
			}
			if rep.Unopenable > 0 {
				return fmt.Errorf("%d keys open under none of the configured key-encryption keys; add the key that sealed them to LECTERN_KEK_PREVIOUS", rep.Unopenable)
			}
			return nil
		})
}
