package platform

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Import statuses, one per line of an import file.
const (
	ImportCreated   = "created"
	ImportUnchanged = "unchanged"
	ImportUpdated   = "updated"
	// ImportConflict: the slug exists with other content and --update was
	// not given. Nothing was changed.
	ImportConflict = "conflict"
	// ImportRefused: the line is malformed, invalid, a duplicate within the
	// file, or names a host another site serves.
	ImportRefused = "refused"
)

// SiteLine is one line of an import file (JSON Lines): the fields of
// `lectern site create`. Unknown members are refused, so a typo is an error
// rather than a silently ignored setting.
type SiteLine struct {
	Slug     string       `json:"slug"`
	Name     string       `json:"name"`
	Origin   string       `json:"origin"`
	Variant  string       `json:"variant"`
	Settings SiteSettings `json:"settings"`
}

// SiteSettings are the optional settings of a SiteLine.
type SiteSettings struct {
	Aliases     []string `json:"aliases"`
	IDTokens    bool     `json:"id_tokens"`
	MCPBeta     bool     `json:"mcp_beta"`
	CIMDOpen    bool     `json:"cimd_open"`
	Description string   `json:"description"`
	Locale      string   `json:"locale"`
	// KeyRotationDays overrides the platform's signing-key rotation period
	// for the site (SettingKeyRotationDays); 0 keeps the default.
	KeyRotationDays int `json:"key_rotation_days"`
}

// ImportResult is what happened to one line.
type ImportResult struct {
	Line   int       `json:"line"`
	Slug   string    `json:"slug,omitempty"`
	Status string    `json:"status"`
	SiteID tenant.ID `json:"site_id,omitempty"`
	Reason string    `json:"reason,omitempty"`
}

// Failed reports whether the line was not applied (refused or conflict).
func (r ImportResult) Failed() bool { return r.Status == ImportRefused || r.Status == ImportConflict }

// ImportOptions tunes ImportSites. A nil *ImportOptions means defaults.
type ImportOptions struct {
	// Update rewrites existing sites whose line differs, instead of
	// reporting a conflict.
	Update bool
	// Workers bound the goroutines generating key rings. Default: the
	// number of CPUs.
	Workers int
	// BatchSize is how many new sites one transaction stores. Default 500.
	BatchSize int
	// Progress, if set, is called with the number of lines decided so far.
	Progress func(done int)
}

// MaxImportLine bounds one line of an import file.
const MaxImportLine = 64 << 10

// ReadImportLines splits r into lines, skipping blank ones, and numbers
// them from 1 as the file does. A line longer than MaxImportLine is kept as
// an input marked TooLong (refused on its own; the rest go on), and a UTF-8
// byte order mark before the first line is dropped.
func ReadImportLines(r io.Reader) ([]ImportInput, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []ImportInput
	for n := 1; ; n++ {
		line, tooLong, err := readImportLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if b := bytes.TrimSpace(line); len(b) > 0 || tooLong {
			out = append(out, ImportInput{Line: n, Raw: bytes.Clone(b), TooLong: tooLong})
		}
		if err != nil {
			return out, nil
		}
	}
}

// readImportLine reads one line (without its newline), at most
// MaxImportLine bytes of it: the rest of a longer line is read and dropped.
func readImportLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxImportLine+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// ImportInput is one raw line and its number in the file.
type ImportInput struct {
	Line int
	Raw  []byte
	// TooLong marks a line longer than MaxImportLine (Raw is then empty).
	TooLong bool
}

// bulkSiteStore is what an import needs of the store beyond storage.Store:
// batched look-ups and inserts.
type bulkSiteStore interface {
	SitesBySlugs(ctx context.Context, slugs []string) ([]storage.Site, error)
	HostOwners(ctx context.Context, hosts []string) (map[string]tenant.ID, error)
	CreateSitesWithKeys(ctx context.Context, sites []*storage.Site, keysFor func(ids []tenant.ID) ([]*storage.SiteKey, error)) error
}

// pending is a valid line waiting to be decided against the store.
type pending struct {
	res   *ImportResult
	site  *storage.Site
	hosts []string
}

// ImportSites creates the sites of lines, idempotently by slug: a line whose
// slug exists with the same content is "unchanged", with other content a
// "conflict" (or "updated" with Update). Every bad line is refused with its
// reason and the others go on. New sites are stored in batches, each in one
// transaction with its key rings, generated on Workers goroutines. Replicas
// are told once per batch (they only need to forget unknown hosts), and
// once per updated site.
//
// The error is for failures of the store itself (the results so far are
// returned with it); refused lines are reported in the results.
func (p *Platform) ImportSites(ctx context.Context, lines []ImportInput, opts *ImportOptions) ([]ImportResult, error) {
	bulk, ok := p.Store.(bulkSiteStore)
	if !ok {
		return nil, errors.New("site import: the store does not support batched inserts")
	}
	o := ImportOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Workers <= 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	results := make([]ImportResult, len(lines))
	done := 0
	progress := func(n int) {
		done += n
		if o.Progress != nil {
			o.Progress(done)
		}
	}

	// Pass 1: parse and validate every line; refuse duplicates within the
	// file (the first occurrence wins).
	var valid []*pending
	slugLine := map[string]int{}
	hostLine := map[string]int{}
	for i, in := range lines {
		r := &results[i]
		r.Line = in.Line
		if in.TooLong {
			r.Status, r.Reason = ImportRefused, fmt.Sprintf("the line is longer than %d bytes", MaxImportLine)
			progress(1)
			continue
		}
		site, err := parseSiteLine(in.Raw)
		if site != nil {
			r.Slug = site.Slug
		}
		if err != nil {
			r.Status, r.Reason = ImportRefused, err.Error()
			progress(1)
			continue
		}
		if first, dup := slugLine[site.Slug]; dup {
			r.Status, r.Reason = ImportRefused, fmt.Sprintf("slug %q is already on line %d", site.Slug, first)
			progress(1)
			continue
		}
		hosts := siteHostNames(site)
		if h, first := firstTaken(hosts, hostLine); first != 0 {
			r.Status, r.Reason = ImportRefused, fmt.Sprintf("host %q is already on line %d", h, first)
			progress(1)
			continue
		}
		slugLine[site.Slug] = in.Line
		for _, h := range hosts {
			hostLine[h] = in.Line
		}
		valid = append(valid, &pending{res: r, site: site, hosts: hosts})
	}

	// Pass 2, per batch: existing slugs and taken hosts in two queries,
	// then the new sites in one transaction.
	for start := 0; start < len(valid); start += o.BatchSize {
		batch := valid[start:min(start+o.BatchSize, len(valid))]
		n, err := p.importBatch(ctx, bulk, batch, &o)
		progress(n)
		if err != nil {
			// The lines not decided yet were not imported; a new run
			// (imports are idempotent) picks them up.
			for i := range results {
				if results[i].Status == "" {
					results[i].Status, results[i].Reason = ImportRefused, "not imported: the import stopped: "+err.Error()
				}
			}
			return results, err
		}
	}
	return results, nil
}

func (p *Platform) importBatch(ctx context.Context, bulk bulkSiteStore, batch []*pending, o *ImportOptions) (int, error) {
	slugs := make([]string, len(batch))
	var hosts []string
	for i, pd := range batch {
		slugs[i] = pd.site.Slug
		hosts = append(hosts, pd.hosts...)
	}
	existing, err := bulk.SitesBySlugs(ctx, slugs)
	if err != nil {
		return 0, err
	}
	bySlug := make(map[string]*storage.Site, len(existing))
	for i := range existing {
		bySlug[existing[i].Slug] = &existing[i]
	}
	owners, err := bulk.HostOwners(ctx, hosts)
	if err != nil {
		return 0, err
	}
	decided := 0
	var fresh []*pending
	for _, pd := range batch {
		r := pd.res
		old := bySlug[pd.site.Slug]
		var self tenant.ID
		if old != nil {
			self = old.ID
		}
		if h, owner := takenByOther(pd.hosts, owners, self); owner != 0 {
			r.Status, r.Reason = ImportRefused, fmt.Sprintf("host %q is served by another site (id %d)", h, owner)
			decided++
			continue
		}
		if old == nil {
			fresh = append(fresh, pd)
			continue
		}
		r.SiteID = old.ID
		decided++
		if diff := siteDiff(old, pd.site); diff == "" {
			r.Status = ImportUnchanged
			continue
		} else if !o.Update {
			r.Status, r.Reason = ImportConflict, "site exists with a different "+diff+" (use --update to overwrite)"
			continue
		}
		upd := *old
		applyLine(&upd, pd.site)
		if err := p.UpdateSite(ctx, &upd); err != nil {
			if !storeDown(ctx, err) {
				r.Status, r.Reason = ImportRefused, err.Error()
				continue
			}
			return decided, err
		}
		r.Status = ImportUpdated
	}
	if len(fresh) == 0 {
		return decided, nil
	}
	err = p.createBatch(ctx, bulk, fresh, o.Workers)
	if err != nil && !storeDown(ctx, err) {
		// Another writer took a slug or host between our check and the
		// insert, or the database refused a value of one line: store the
		// batch one site at a time so that only the lines concerned are
		// refused.
		for _, pd := range fresh {
			switch err := p.createBatch(ctx, bulk, []*pending{pd}, o.Workers); {
			case errors.Is(err, storage.ErrConflict):
				pd.res.Status, pd.res.Reason = ImportRefused, "slug, origin or alias was taken by another site meanwhile"
			case err != nil && storeDown(ctx, err):
				return decided, err
			case err != nil:
				pd.res.Status, pd.res.Reason = ImportRefused, "the database refused the line: "+err.Error()
			}
			decided++
		}
		return decided, nil
	}
	if err != nil {
		return decided, err
	}
	return decided + len(fresh), nil
}

// storeDown reports whether err is a failure of the store or of the run
// rather than of one line's values: the import stops on it.
func storeDown(ctx context.Context, err error) bool {
	return errors.Is(err, storage.ErrUnavailable) || ctx.Err() != nil
}

// createBatch stores fresh sites with their key rings in one transaction
// and announces them.
func (p *Platform) createBatch(ctx context.Context, bulk bulkSiteStore, fresh []*pending, workers int) error {
	sites := make([]*storage.Site, len(fresh))
	for i, pd := range fresh {
		s := *pd.site
		s.Aliases = slices.Clone(pd.site.Aliases)
		sites[i] = &s
	}
	err := bulk.CreateSitesWithKeys(ctx, sites, func(ids []tenant.ID) ([]*storage.SiteKey, error) {
		return p.Keys.NewRingKeys(ctx, ids, workers)
	})
	if err != nil {
		return err
	}
	for i, pd := range fresh {
		pd.res.Status, pd.res.SiteID = ImportCreated, sites[i].ID
		if err := p.reschedule(ctx, sites[i].ID, KeyRotationDays(sites[i])); err != nil {
			return err
		}
	}
	// New sites are in no replica's cache; what replicas may hold is the
	// negative answer for their hosts, which one message clears.
	p.announce(ctx, SitesChannel, SitesAdded)
	return nil
}

// SitesAdded is the broadcast on SitesChannel after a batch of new sites:
// no site has ID 0, so receivers drop no cached site, only the remembered
// unknown hosts (tenant.Resolver.Invalidate clears them all).
const SitesAdded tenant.ID = 0

// parseSiteLine decodes and validates one line into a site in canonical
// form. The returned site may be non-nil with an error (to report its slug).
func parseSiteLine(raw []byte) (*storage.Site, error) {
	if !utf8.Valid(raw) {
		// encoding/json would turn the bytes into U+FFFD silently.
		return nil, errors.New("the line is not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var l SiteLine
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("malformed JSON: more than one value on the line")
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"slug", l.Slug}, {"name", l.Name}, {"origin", l.Origin}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	site := &storage.Site{Slug: strings.TrimSpace(l.Slug)}
	if len(missing) > 0 {
		return site, fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	if l.Variant == "" {
		l.Variant = string(tenant.VariantVendor)
	}
	st := l.Settings
	if st.KeyRotationDays < 0 || st.KeyRotationDays > MaxKeyRotationDays {
		return site, fmt.Errorf("settings.key_rotation_days %d must be between 1 and %d (0: the platform default)", st.KeyRotationDays, MaxKeyRotationDays)
	}
	if st.Locale == "" {
		st.Locale = "en"
	}
	*site = storage.Site{
		Slug: l.Slug, Name: strings.TrimSpace(l.Name), Origin: l.Origin, Aliases: slices.Clone(st.Aliases),
		RegistrationVariant: tenant.Variant(strings.ToUpper(l.Variant)), IDTokensEnabled: st.IDTokens,
		MCPConnectionsBeta: st.MCPBeta, CIMDOpen: st.CIMDOpen, Description: st.Description, Locale: st.Locale,
		Settings: map[string]any{},
	}
	if st.KeyRotationDays > 0 {
		site.Settings[SettingKeyRotationDays] = float64(st.KeyRotationDays)
	}
	if site.Aliases == nil {
		site.Aliases = []string{}
	}
	if err := validateSite(site); err != nil {
		return site, errors.New(strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
	}
	if err := CheckSite(site); err != nil {
		return site, errors.New(strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
	}
	return site, nil
}

// siteHostNames are the hosts a valid site claims: its origin's and its
// aliases, lower-case.
func siteHostNames(s *storage.Site) []string {
	hosts := []string{s.Tenant().Host()}
	for _, a := range s.Aliases {
		if a = strings.ToLower(a); !slices.Contains(hosts, a) {
			hosts = append(hosts, a)
		}
	}
	return hosts
}

func firstTaken(hosts []string, seen map[string]int) (string, int) {
	for _, h := range hosts {
		if n, ok := seen[h]; ok {
			return h, n
		}
	}
	return "", 0
}

func takenByOther(hosts []string, owners map[string]tenant.ID, self tenant.ID) (string, tenant.ID) {
	for _, h := range hosts {
		if id, ok := owners[h]; ok && id != self {
			return h, id
		}
	}
	return "", 0
}

// siteDiff names the first field in which the stored site differs from
// the line's, or "" when the line would change nothing. Settings the line
// does not carry (limits set by other commands) are not compared.
func siteDiff(old, line *storage.Site) string {
	switch {
	case old.Name != line.Name:
		return "name"
	case old.Origin != line.Origin:
		return "origin"
	case !slices.Equal(sortedHosts(old.Aliases), sortedHosts(line.Aliases)):
		return "aliases"
	case old.RegistrationVariant != line.RegistrationVariant:
		return "variant"
	case old.IDTokensEnabled != line.IDTokensEnabled:
		return "id_tokens"
	case old.MCPConnectionsBeta != line.MCPConnectionsBeta:
		return "mcp_beta"
	case old.CIMDOpen != line.CIMDOpen:
		return "cimd_open"
	case old.Description != line.Description:
		return "description"
	case old.Locale != line.Locale:
		return "locale"
	case KeyRotationDays(old) != KeyRotationDays(line):
		return "key_rotation_days"
	}
	return ""
}

func sortedHosts(h []string) []string {
	s := make([]string, len(h))
	for i, a := range h {
		s[i] = strings.ToLower(a)
	}
	slices.Sort(s)
	return s
}

// applyLine copies the line's fields onto a stored site, keeping its ID,
// slug, creation time and the settings the line does not carry.
func applyLine(dst, line *storage.Site) {
	dst.Name, dst.Origin, dst.Aliases = line.Name, line.Origin, line.Aliases
	dst.RegistrationVariant, dst.IDTokensEnabled = line.RegistrationVariant, line.IDTokensEnabled
	dst.MCPConnectionsBeta, dst.CIMDOpen = line.MCPConnectionsBeta, line.CIMDOpen
	dst.Description, dst.Locale = line.Description, line.Locale
	settings := make(map[string]any, len(dst.Settings)+1)
	for k, v := range dst.Settings {
		settings[k] = v
	}
	delete(settings, SettingKeyRotationDays)
	if d := KeyRotationDays(line); d > 0 {
		settings[SettingKeyRotationDays] = float64(d)
	}
	dst.Settings = settings
}
