package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
)

type config struct {
	target      string // listener address, 127.0.0.1:PORT
	origin      string // site origin, e.g. http://localhost:PORT
	databaseURL string
	clients     int
	duration    time.Duration
	concurrency []int
	scenarios   []string
	neighbour   bool
	quietConc   int
	floodConc   int
	flood       []string
	label       string
	// beforeMeasure is a shell command run after the tokens are prepared
	// and before each measured window: an outage drill stops a service
	// there (`redis-cli -p N shutdown nosave`).
	beforeMeasure string
}

func main() {
	var cfg config
	var conc, scen string
	flag.StringVar(&cfg.target, "target", "127.0.0.1:8080", "the server's listener (loopback only)")
	flag.StringVar(&cfg.origin, "origin", "", "the site origin (default http://localhost:<target port>: Demo Academy)")
	flag.StringVar(&cfg.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "database of the server, to create bench clients")
	flag.IntVar(&cfg.clients, "clients", 512, "bench clients (the token endpoint allows 30 requests/s per client: 512 clients allow 15,360 token requests/s)")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "measured time per scenario and concurrency (at most 60s)")
	flag.StringVar(&conc, "concurrency", "16,64", "comma-separated concurrency levels")
	flag.StringVar(&scen, "scenarios", "flow,refresh,userinfo,graphql,mcp-search,mcp-enrollments", "comma-separated scenarios: flow, refresh, userinfo, graphql, mcp-search, mcp-enrollments")
	flag.BoolVar(&cfg.neighbour, "neighbour", false, "measure a noisy neighbour instead of the scenarios: Open School runs code flows while Demo Academy is flooded (neighbour.go)")
	flag.IntVar(&cfg.quietConc, "quiet-concurrency", 4, "--neighbour: concurrent code flows at the quiet site")
	flag.IntVar(&cfg.floodConc, "flood-concurrency", 32, "--neighbour: concurrent flooding requests at the noisy site, shared by token, GraphQL, MCP and sign-in")
	flag.StringVar(&cfg.label, "label", "", "--neighbour: the label of this run's rows")
	floodKinds := flag.String("flood", "token,graphql,mcp", "--neighbour: what floods the noisy site: token, graphql, mcp, signin")
	flag.StringVar(&cfg.beforeMeasure, "before-measure", "", "shell command run after preparing tokens, before each measured window (e.g. stop Redis for an outage run)")
	cpuProfile := flag.String("cpuprofile", "", "write the load generator's own CPU profile here")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fatal(err.Error())
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	host, port, err := net.SplitHostPort(cfg.target)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		fatal("--target must be a loopback host:port")
	}
	if cfg.origin == "" {
		cfg.origin = "http://localhost:" + port
	}
	cfg.duration = min(cfg.duration, time.Minute)
	for _, c := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 || n > 512 {
			fatal("bad --concurrency")
		}
		cfg.concurrency = append(cfg.concurrency, n)
	}
	cfg.scenarios = strings.Split(scen, ",")
	for _, k := range strings.Split(*floodKinds, ",") {
		if k = strings.TrimSpace(k); k != "" {
			cfg.flood = append(cfg.flood, k)
		}
	}
	if len(cfg.flood) == 0 {
		fatal("--flood names nothing")
	}
	if err := run(context.Background(), cfg); err != nil {
		pprof.StopCPUProfile()
		fatal(err.Error())
	}
}

func fatal(msg string) {
	fmt.Fprintln(os.Stderr, "lectern-load:", msg)
	os.Exit(1)
}

const redirectURI = "http://127.0.0.1:53682/callback"

// bench is the prepared state: clients with consent, sessions, tokens.
type bench struct {
	cfg      config
	http     *http.Client // setup and token preparation
	host     string       // the site's Host header
	slug     string       // the site's slug (setup)
	nClients int          // bench clients to create (setup)
	nSess    int          // sessions to sign in (setup)
	clients  []string
	sessions []*http.Cookie
	conns    []*conn // one keep-alive connection per measured worker
}

func run(ctx context.Context, cfg config) error {
	if cfg.neighbour {
		return runNeighbour(ctx, cfg)
	}
	b, err := newBench(cfg, demo.AcademySlug, cfg.clients, slices.Max(cfg.concurrency))
	if err != nil {
		return err
	}
	if err := b.setup(ctx); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	fmt.Printf("| scenario | concurrency | ops | ops/s | p50 | p99 | errors |\n|---|---|---|---|---|---|---|\n")
	for _, sc := range cfg.scenarios {
		for _, c := range cfg.concurrency {
			r, err := b.measure(ctx, strings.TrimSpace(sc), c)
			if err != nil {
				return fmt.Errorf("%s at %d: %w", sc, c, err)
			}
			fmt.Printf("| %s | %d | %d | %.0f | %s | %s | %d |\n", sc, c, r.ops, r.rate, fmtDur(r.p50), fmtDur(r.p99), r.errors)
		}
	}
	return nil
}

// newBench prepares a bench of the site slug at cfg.origin with nClients
// bench clients and nSess signed-in sessions (made by setup).
func newBench(cfg config, slug string, nClients, nSess int) (*bench, error) {
	b := &bench{cfg: cfg, slug: slug, nClients: nClients, nSess: nSess}
	u, err := url.Parse(cfg.origin)
	if err != nil {
		return nil, err
	}
	b.host = u.Host
	d := &net.Dialer{Timeout: 5 * time.Second}
	b.http = &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, cfg.target)
			},
			MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return b, nil
}

// setup creates the bench clients (member, public, loopback) and one signed-in
// session per worker, and approves consent for every client once.
func (b *bench) setup(ctx context.Context) error {
	store, err := sqlstore.Open(ctx, b.cfg.databaseURL, nil)
	if err != nil {
		return err
	}
	defer store.Close()
	site, err := store.SiteBySlug(ctx, b.slug)
	if err != nil {
		return fmt.Errorf("demo site: %w (seed it with lectern seed demo)", err)
	}
	for i := range b.nClients {
		id := "bench-client-" + strconv.Itoa(i)
		c := &storage.Client{SiteID: &site.ID, ClientID: id, Name: "Bench " + strconv.Itoa(i), Audience: storage.AudienceMember,
			Type: storage.ClientPublic, ApplicationType: "native", RedirectURIs: []string{redirectURI}, Scopes: scope.MemberDefault(),
			Source: storage.SourceAdmin, Reviewed: true, CreatedBy: "lectern-load"}
		if err := store.CreateClient(ctx, c); err != nil && !errors.Is(err, storage.ErrConflict) {
			return err
		}
		b.clients = append(b.clients, id)
	}
	workers := b.nSess
	first := oauthtest.NewBrowser(b.cfg.target)
	for i := range workers {
		br := first
		if i > 0 {
			br = oauthtest.NewBrowser(b.cfg.target)
		}
		page, err := br.Get(b.cfg.origin + "/login")
		if err != nil {
			return err
		}
		f, err := oauthtest.ParseForm(page.Body, "login-form")
		if err != nil {
			return err
		}
		f.Values.Set("email", demo.StudentEmail)
		f.Values.Set("password", demo.StudentPassword)
		if _, err := br.PostForm(b.cfg.origin+"/login", f.Values); err != nil {
			return err
		}
		u, _ := url.Parse(b.cfg.origin)
		var sess *http.Cookie
		for _, c := range br.Client.Jar.Cookies(u) {
			if strings.HasPrefix(c.Name, "lectern_session") {
				sess = c
			}
		}
		if sess == nil {
			return errors.New("sign-in did not create a session")
		}
		b.sessions = append(b.sessions, sess)
	}
	// Consent once per client (remembered afterwards).
	for _, c := range b.clients {
		v := verifier()
		out, err := first.Authorize(b.authURL(c, v), oauthtest.Options{Email: demo.StudentEmail, Password: demo.StudentPassword})
		if err != nil {
			return err
		}
		if _, err := out.Code(); err != nil {
			return fmt.Errorf("consent for %s: %w", c, err)
		}
	}
	return nil
}

func verifier() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (b *bench) authURL(clientID, verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
		"scope": {"openid profile email account:read"}, "state": {"s" + verifier[:8]}, "nonce": {"n" + verifier[:8]},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"resource": {b.cfg.origin},
	}
	return b.cfg.origin + "/oauth/authorize?" + q.Encode()
}

type tokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	IDToken      string `json:"id_token"`
}

// flow runs authorize (with the worker's session) and the code exchange,
// over the worker's own connection.
func (b *bench) flow(worker int, client string) (*tokens, error) {
	c := b.conns[worker]
	v := verifier()
	authURL := b.authURL(client, v)
	path := authURL[len(b.cfg.origin):]
	resp, err := c.do("GET", b.host, path, []string{"Cookie: " + b.sessions[worker].Name + "=" + b.sessions[worker].Value}, nil)
	if err != nil {
		return nil, err
	}
	if resp.status != http.StatusFound {
		return nil, fmt.Errorf("authorize: %d", resp.status)
	}
	loc, err := url.Parse(string(resp.location))
	if err != nil || loc.Query().Get("code") == "" {
		return nil, fmt.Errorf("authorize redirect %q", resp.location)
	}
	t, err := b.tokenOn(c, url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirectURI},
		"client_id": {client}, "code_verifier": {v}, "resource": {b.cfg.origin}})
	if err == nil && t.IDToken == "" {
		err = errors.New("no id_token")
	}
	return t, err
}

var formHeaders = []string{"Content-Type: application/x-www-form-urlencoded"}

// MCP tools/call requests (the server is stateless: no session to open).
var (
	mcpHeaders         = []string{"Content-Type: application/json", "Accept: application/json, text/event-stream", "MCP-Protocol-Version: 2025-11-25"}
	mcpSearchBody      = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_courses","arguments":{"query":"go"}}}`)
	mcpEnrollmentsBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"my_enrollments","arguments":{}}}`)
)

// graphqlBody is issue 5's benchmark query: a page of enrolled courses with
// the last watched lecture of each.
var graphqlBody = []byte(`{"query":"{ viewer { enrolledCourses(first: 20) { nodes { slug lastWatchedLecture { lectureId positionSeconds } } } } }"}`)

// tokenOn posts to the token endpoint over c.
func (b *bench) tokenOn(c *conn, form url.Values) (*tokens, error) {
	resp, err := c.do("POST", b.host, "/api/oauth/token", formHeaders, []byte(form.Encode()))
	if err != nil {
		return nil, err
	}
	if resp.status != http.StatusOK {
		return nil, fmt.Errorf("token: %d %s", resp.status, resp.body)
	}
	var t tokens
	if err := json.Unmarshal(resp.body, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

type result struct {
	ops, errors int64
	rate        float64
	p50, p99    time.Duration
}

// measure runs scenario sc with c workers for the configured duration.
func (b *bench) measure(ctx context.Context, sc string, c int) (*result, error) {
	// Per-worker state: refresh chains and access tokens from real flows.
	type state struct {
		refresh []string // one chain per client the worker owns
		clients []string
		access  string
	}
	for len(b.conns) < c {
		b.conns = append(b.conns, newConn(b.cfg.target))
	}
	states := make([]*state, c)
	perWorker := (len(b.clients) + c - 1) / c
	for w := range c {
		st := &state{}
		for k := 0; k < perWorker && (sc == "refresh" || k == 0); k++ {
			idx := (w + k*c) % len(b.clients)
			t, err := b.flow(w, b.clients[idx])
			if err != nil {
				return nil, fmt.Errorf("preparing tokens: %w", err)
			}
			st.refresh = append(st.refresh, t.RefreshToken)
			st.clients = append(st.clients, b.clients[idx])
			st.access = t.AccessToken
		}
		states[w] = st
	}
	op := func(w, n int) error {
		st := states[w]
		switch sc {
		case "flow":
			// Spread the workers over every client: the token endpoint
			// limits each client to 30 requests/s.
			_, err := b.flow(w, b.clients[(w+n*c)%len(b.clients)])
			return err
		case "refresh":
			k := n % len(st.refresh)
			t, err := b.tokenOn(b.conns[w], url.Values{"grant_type": {"refresh_token"}, "refresh_token": {st.refresh[k]}, "client_id": {st.clients[k]}})
			if err != nil {
				return err
			}
			st.refresh[k] = t.RefreshToken
			return nil
		case "graphql":
			resp, err := b.conns[w].do("POST", b.host, "/member/graphql", []string{"Authorization: Bearer " + st.access, "Content-Type: application/json"}, graphqlBody)
			if err != nil {
				return err
			}
			if resp.status != 200 || !bytes.Contains(resp.body, []byte(`"enrolledCourses"`)) || bytes.Contains(resp.body, []byte(`"errors"`)) {
				return fmt.Errorf("graphql %d %.200s", resp.status, resp.body)
			}
			return nil
		case "mcp-search", "mcp-enrollments":
			body, headers := mcpSearchBody, mcpHeaders
			if sc == "mcp-enrollments" {
				body, headers = mcpEnrollmentsBody, append([]string{"Authorization: Bearer " + st.access}, mcpHeaders...)
			}
			resp, err := b.conns[w].do("POST", b.host, "/mcp", headers, body)
			if err != nil {
				return err
			}
			if resp.status != 200 || !bytes.Contains(resp.body, []byte(`"structuredContent"`)) || bytes.Contains(resp.body, []byte(`"isError":true`)) {
				return fmt.Errorf("mcp %d %.300s", resp.status, resp.body)
			}
			return nil
		case "userinfo":
			resp, err := b.conns[w].do("GET", b.host, "/api/oauth/userinfo", []string{"Authorization: Bearer " + st.access}, nil)
			if err != nil {
				return err
			}
			if resp.status != 200 {
				return fmt.Errorf("userinfo %d", resp.status)
			}
			return nil
		}
		return fmt.Errorf("unknown scenario %q", sc)
	}
	if b.cfg.beforeMeasure != "" {
		out, err := exec.CommandContext(ctx, "sh", "-c", b.cfg.beforeMeasure).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("--before-measure: %w: %s", err, out)
		}
	}
	// Warm-up, then the measured window.
	warm, cancel := context.WithTimeout(ctx, time.Second)
	b.drive(warm, c, op, nil)
	cancel()
	lat := make([][]time.Duration, c)
	var errs atomic.Int64
	mctx, cancel := context.WithTimeout(ctx, b.cfg.duration)
	defer cancel()
	fmt.Fprintf(os.Stderr, "measuring %s at concurrency %d for %s\n", sc, c, b.cfg.duration)
	start := time.Now()
	b.drive(mctx, c, op, func(w int, d time.Duration, err error) {
		if err != nil {
			if errs.Add(1) <= 3 {
				fmt.Fprintln(os.Stderr, "error:", err)
			}
			return
		}
		lat[w] = append(lat[w], d)
	})
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return nil, errors.New("no successful operation")
	}
	slices.Sort(all)
	return &result{ops: int64(len(all)), errors: errs.Load(), rate: float64(len(all)) / elapsed.Seconds(),
		p50: all[len(all)/2], p99: all[len(all)*99/100]}, nil
}

func (b *bench) drive(ctx context.Context, c int, op func(w, n int) error, record func(int, time.Duration, error)) {
	var wg sync.WaitGroup
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				t0 := time.Now()
				err := op(w, n)
				if record != nil && ctx.Err() == nil {
					record(w, time.Since(t0), err)
				}
			}
		}()
	}
	wg.Wait()
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}
