package cache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/lectern/lectern/storage"
)

var _ storage.Cache = (*Redis)(nil)

// subscribeTimeout bounds the wait for Redis to confirm a subscription, so
// that Subscribe with a context without deadline cannot hang on a dead
// server.
const subscribeTimeout = 5 * time.Second

// incrScript increments a counter and gives it its expiry in the same atomic
// step: with INCR then PEXPIRE as two commands, a crash or a lost connection
// in between would leave a counter that never expires (a rate limit that
// never resets). It sets the expiry whenever the key has none, which is
// exactly when INCR created it.
const incrScript = `
local n = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return n
`

// RedisOptions configures NewRedis. A nil *RedisOptions gives the defaults.
type RedisOptions struct {
	// Prefix is prepended to every key and channel name, so deployments and
	// tests sharing one Redis never see each other's data. Pub/sub ignores
	// the database number of the URL, so for channels the prefix is the only
	// separation. It must not contain '{': the site hash tag of
	// storage.CacheKey has to stay the first braces of the key for Redis
	// Cluster to keep a site's keys in one slot.
	Prefix string
	// PoolSize is go-redis' connection pool size (per node on a Cluster);
	// zero keeps its default (ten connections per GOMAXPROCS).
	PoolSize int
	// NoAutoPipeline sends every command on its own round trip. By default
	// the plain reads and writes (GET, MGET, HMGET, SET, SET NX, GETDEL,
	// DEL) of concurrent callers are batched into shared pipelines
	// (go-redis' autopipeliner; see Redis).
	NoAutoPipeline bool
	// OpTimeout bounds the wait for one write, whatever the caller's
	// deadline (default DefaultOpTimeout): a Redis that accepts
	// connections and then stalls fails requests fast instead of holding
	// them.
	OpTimeout time.Duration
	// ReadTimeout bounds the wait for one read (GET, MGET, HMGET; default
	// DefaultReadTimeout). Every read has a database behind it, so a slow
	// answer is worth less than a quick fallback.
	ReadTimeout time.Duration
	// BreakerThreshold is how many consecutive failures open the circuit
	// breaker (default DefaultBreakerThreshold; negative: no breaker).
	BreakerThreshold int
	// BreakerMinOpen and BreakerMaxOpen bound how long the breaker stays
	// open before each probe (defaults DefaultBreakerMinOpen,
	// DefaultBreakerMaxOpen).
	BreakerMinOpen, BreakerMaxOpen time.Duration
	// AllowEviction accepts a Redis whose maxmemory-policy may evict keys.
	// Without it NewRedis refuses one (ErrEvictingPolicy): eviction drops
	// sessions, codes and rate-limit state at random.
	AllowEviction bool
	// Logger receives warnings (a managed Redis that hides its policy).
	// Default: discard.
	Logger *slog.Logger
	// TracerProvider receives a span per command (redisotel); nil: the
	// global one, a no-op unless tracing is configured.
	TracerProvider trace.TracerProvider
	// NoTracing leaves the span per command out altogether, for a caller
	// that knows tracing is off: with a no-op provider redisotel's hook
	// and the bookkeeping of autopipelined commands would still run on
	// every command (about 2% of the server's CPU in a code-flow profile).
	NoTracing bool
}

// Defaults of RedisOptions.
const (
	// DefaultOpTimeout is go-redis' own read timeout.
	DefaultOpTimeout = 3 * time.Second
	// DefaultReadTimeout: a healthy Redis answers in well under a
	// millisecond; half a second is a stall.
	DefaultReadTimeout = 500 * time.Millisecond
)

// ErrEvictingPolicy: the Redis may evict keys (its maxmemory-policy is not
// noeviction) and eviction was not allowed.
var ErrEvictingPolicy = errors.New("cache: redis maxmemory-policy may evict keys")

// Redis is the storage.Cache shared by every replica of a deployment: one
// server, a Sentinel-watched master (following failovers) or a Cluster
// (see parseRedisURL for the URL forms). It needs Redis 7.0 or later
// (GETDEL; sharded pub/sub on a Cluster). It is safe for concurrent use.
//
// Autopipelining: the plain commands of concurrent callers ride shared
// pipelines (go-redis' AutoPipeliner, deferred face, one ordered batch in
// flight): what queues while a batch is on the wire goes out as the next
// one, so under load one write and one read carry dozens of commands, and
// a lone caller still gets a single round trip. At 64 concurrent sign-ins
// this halves Redis' CPU and the syscalls per command (docs/PERFORMANCE.md).
// Each call still waits no longer than its own deadline allows (nor, on a
// stalled Redis, than its command's timeout; a caller canceled meanwhile
// waits for that timeout: deadlines.go); a command
// already queued runs even if its caller gave up (like one already written
// to a socket). Scripts (Incr, Allow, HashReplace, HashAdd) and pub/sub use
// plain connections.
//
// A circuit breaker (see breaker) turns an outage into fast failures:
// after a few consecutive failures every call answers
// storage.ErrUnavailable at once until a background probe finds Redis
// back.
type Redis struct {
	rdb         redis.UniversalClient
	cluster     *redis.ClusterClient // the same client, on a Cluster
	topology    Topology
	ap          *redis.AutoPipeliner // nil with NoAutoPipeline
	opTimeout   time.Duration
	readTimeout time.Duration
	opShared    *sharedDeadlines // opTimeout's shared deadlines (deadlines.go)
	readShared  *sharedDeadlines // readTimeout's
	prefix      string
	limiter     *redis_rate.Limiter
	incr        *redis.Script
	hreplace    *redis.Script
	hadd        *redis.Script
	breaker     *breaker        // nil when disabled
	latency     storage.Latency // the plain commands' waits (run)
	policy      string
	log         *slog.Logger
	tracer      trace.Tracer // spans for autopipelined commands (tracing.go)
	piped       sync.Map     // commands in the autopipeliner: redisotel leaves them to submit
	tracing     bool         // redisotel's hook is installed (not NoTracing)

	mu      sync.Mutex // orders subs.Add before Close's subs.Wait
	closed  bool
	closing chan struct{} // closed by Close: ends every subscription and the probe
	subs    sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// NewRedis connects to the Redis at url and checks that it answers and
// that it will not evict keys (unless opts.AllowEviction). url is one of
//
//	redis://[user:pass@]host:port/db, rediss://..., unix://...   one server
//	redis+sentinel://[user:pass@]h1:26379,h2:26379/<master>[/db][?sentinel_password=...]
//	redis+cluster://[user:pass@]h1:7000,h2:7001
//
// or the rediss+ forms of the last two. An unreachable server gives an
// error wrapping storage.ErrUnavailable.
func NewRedis(ctx context.Context, url string, opts *RedisOptions) (*Redis, error) {
	var o RedisOptions
	if opts != nil {
		o = *opts
	}
	if strings.Contains(o.Prefix, "{") {
		return nil, fmt.Errorf("cache: redis prefix %q must not contain '{'", o.Prefix)
	}
	target, err := parseRedisURL(url)
	if err != nil {
		return nil, fmt.Errorf("cache: invalid redis URL: %w", err)
	}
	rdb := target.newClient(o.PoolSize)
	tp := cmp.Or[trace.TracerProvider](o.TracerProvider, otel.GetTracerProvider())
	r := &Redis{
		rdb:         rdb,
		topology:    target.topology,
		prefix:      o.Prefix,
		limiter:     redis_rate.NewLimiter(rdb),
		incr:        redis.NewScript(incrScript),
		hreplace:    redis.NewScript(hashReplaceScript),
		hadd:        redis.NewScript(hashAddScript),
		closing:     make(chan struct{}),
		opTimeout:   o.OpTimeout,
		readTimeout: o.ReadTimeout,
		log:         o.Logger,
		tracer:      tp.Tracer(tracerName),
		tracing:     !o.NoTracing,
	}
	r.cluster, _ = rdb.(*redis.ClusterClient)
	if r.opTimeout <= 0 {
		r.opTimeout = DefaultOpTimeout
	}
	if r.readTimeout <= 0 {
		r.readTimeout = DefaultReadTimeout
	}
	r.opShared, r.readShared = newSharedDeadlines(r.opTimeout), newSharedDeadlines(r.readTimeout)
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.tracing {
		if err := r.instrument(tp); err != nil {
			_ = rdb.Close()
			return nil, err
		}
	}
	if err := r.checkStart(ctx, target); err != nil {
		_ = rdb.Close()
		return nil, err
	}
	if err := r.checkPolicy(ctx, o.AllowEviction); err != nil {
		_ = rdb.Close()
		return nil, err
	}
	if !o.NoAutoPipeline {
		// A batch target of 100 instead of 200: go-redis pools its queue
		// slices with a capacity of 100 and throws back any smaller than
		// the target, so with 200 every flush allocated a fresh 3.2 KB
		// slice and the pool filled with both sizes (1-1.8 MB of a 7 MB
		// live heap at idle). A batch here is at most one command per
		// request in flight, so 100 rarely binds, and it is soft anyway.
		apo := redis.DefaultAutoPipelineOptions()
		apo.MaxBatchSize = 100
		if r.ap, err = rdb.AsyncAutoPipelineWithOptions(apo); err != nil {
			_ = rdb.Close()
			return nil, fmt.Errorf("cache: redis autopipeline: %w", err)
		}
	}
	threshold := o.BreakerThreshold
	if threshold == 0 {
		threshold = DefaultBreakerThreshold
	}
	if threshold > 0 {
		r.breaker = newBreaker(threshold, o.BreakerMinOpen, o.BreakerMaxOpen, r.ping, r.closing)
	}
	return r, nil
}

// Topology says whether r talks to one server, a Sentinel group or a
// Cluster.
func (r *Redis) Topology() Topology { return r.topology }

// MaxmemoryPolicy is the maxmemory-policy NewRedis found ("unknown" when
// the server would not say).
func (r *Redis) MaxmemoryPolicy() string { return r.policy }

// Breaker reports the circuit breaker's state.
func (r *Redis) Breaker() BreakerState { return r.breaker.state() }

// guard runs op under the breaker and an operation timeout: op fails at
// once while the breaker is open, never waits longer than timeout (plus a
// twentieth of it: deadlines.go) whatever the caller's deadline (a Redis
// that accepts the connection and then stalls must hold no caller longer
// than a command may take), and its outcome is counted.
func (r *Redis) guard(ctx context.Context, timeout time.Duration, op func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		// A caller that gave up sends nothing.
		return err
	}
	if err := r.breaker.allow(); err != nil {
		return err
	}
	now := time.Now()
	if dl, ok := ctx.Deadline(); !ok || dl.Sub(now) > timeout {
		if shared, sdl := r.sharedDeadline(timeout, now); shared != nil && (!ok || !dl.Before(sdl)) && !trace.SpanFromContext(ctx).IsRecording() {
			ctx = shared
		} else {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
	}
	err := op(ctx)
	r.breaker.record(countsAsOutage(err))
	return err
}

// sharedDeadline is the shared deadline context (see sharedDeadlines) for
// a command bounded by timeout starting now, or nil for a timeout that has
// none.
func (r *Redis) sharedDeadline(timeout time.Duration, now time.Time) (context.Context, time.Time) {
	switch timeout {
	case r.readTimeout:
		return r.readShared.at(now)
	case r.opTimeout:
		return r.opShared.at(now)
	}
	return nil, time.Time{}
}

// countsAsOutage says whether err means Redis could not serve a request
// (unreachable, stalled, loading, failing over), which is what the breaker
// counts. A full Redis (OOM) still serves reads, so it does not open the
// breaker; nor does a caller that gave up.
func countsAsOutage(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return false
	}
	return unavailable(err) && !redis.IsOOMError(err)
}

// run executes cmd under guard, through the autopipeliner when there is
// one, and waits for its result no longer than the context allows.
// Its wait, from submit to answer, is recorded in Latency (calls the
// breaker refused sent nothing and are not).
func (r *Redis) run(ctx context.Context, timeout time.Duration, cmd redis.Cmder) error {
	return r.guard(ctx, timeout, func(ctx context.Context) error {
		start := time.Now()
		defer func() { r.latency.Observe(time.Since(start)) }()
		if r.ap == nil {
			return r.rdb.Process(ctx, cmd)
		}
		return r.submit(ctx, cmd)
	})
}

// Latency is how long the plain commands (GET, MGET, SET, GETDEL, DEL, …:
// those that ride the autopipeliner) kept their callers waiting: the
// queueing behind the batch on the wire, the round trip and the wake-up.
func (r *Redis) Latency() storage.LatencySnapshot { return r.latency.Snapshot() }

func (r *Redis) key(k string) string { return r.prefix + k }

// Get implements storage.Cache.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	cmd := redis.NewStringCmd(ctx, "get", r.key(key))
	if err := r.run(ctx, r.readTimeout, cmd); err != nil {
		return nil, mapErr("GET", err)
	}
	b, err := cmd.Bytes()
	if err != nil {
		return nil, mapErr("GET", err)
	}
	return b, nil
}

// GetMulti implements storage.Cache with one MGET (on a Cluster, one MGET
// when the keys share a hash tag, else one GET per key in one pipeline).
func (r *Redis) GetMulti(ctx context.Context, keys ...string) ([][]byte, error) {
	if len(keys) == 0 {
		// MGET without keys is a syntax error; there is nothing to ask.
		return [][]byte{}, nil
	}
	if r.cluster != nil && !sameSlot(keys) {
		return r.getEach(ctx, keys)
	}
	args := make([]any, 0, 1+len(keys))
	args = append(args, "mget")
	for _, k := range keys {
		args = append(args, r.key(k))
	}
	cmd := redis.NewSliceCmd(ctx, args...)
	if err := r.run(ctx, r.readTimeout, cmd); err != nil {
		return nil, mapErr("MGET", err)
	}
	return byteValues("MGET", cmd.Val())
}

// byteValues turns a multi-value reply (MGET, HMGET) into values: nil for a
// missing one, never nil for a present one, so that an empty value is not
// mistaken for a miss.
func byteValues(op string, vals []any) ([][]byte, error) {
	out := make([][]byte, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
		case string:
			out[i] = append(make([]byte, 0, len(v)), v...)
		default:
			return nil, fmt.Errorf("cache: redis %s: unexpected reply type %T", op, v)
		}
	}
	return out, nil
}

// getEach reads keys of several slots of a Cluster: go-redis sends each
// GET of the pipeline to its slot's master.
func (r *Redis) getEach(ctx context.Context, keys []string) ([][]byte, error) {
	cmds := make([]*redis.StringCmd, len(keys))
	err := r.guard(ctx, r.readTimeout, func(ctx context.Context) error {
		_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range keys {
				cmds[i] = p.Get(ctx, r.key(k))
			}
			return nil
		})
		if errors.Is(err, redis.Nil) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, mapErr("GET", err)
	}
	out := make([][]byte, len(keys))
	for i, c := range cmds {
		b, err := c.Bytes()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return nil, mapErr("GET", err)
		default:
			out[i] = b
		}
	}
	return out, nil
}

// Set implements storage.Cache.
func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := checkTTL(ttl); err != nil {
		return err
	}
	return mapErr("SET", r.run(ctx, r.opTimeout, redis.NewStatusCmd(ctx, "set", r.key(key), value, "px", ceilMillis(ttl).Milliseconds())))
}

// SetNX implements storage.Cache with SET NX.
func (r *Redis) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	if err := checkTTL(ttl); err != nil {
		return false, err
	}
	cmd := redis.NewStatusCmd(ctx, "set", r.key(key), value, "px", ceilMillis(ttl).Milliseconds(), "nx")
	switch err := r.run(ctx, r.opTimeout, cmd); {
	case err == nil:
		return true, nil
	case errors.Is(err, redis.Nil):
		// SET NX answers nil when the key exists.
		return false, nil
	default:
		return false, mapErr("SET NX", err)
	}
}

// GetDel implements storage.Cache with GETDEL, which Redis runs atomically.
func (r *Redis) GetDel(ctx context.Context, key string) ([]byte, error) {
	cmd := redis.NewStringCmd(ctx, "getdel", r.key(key))
	if err := r.run(ctx, r.opTimeout, cmd); err != nil {
		return nil, mapErr("GETDEL", err)
	}
	b, err := cmd.Bytes()
	if err != nil {
		return nil, mapErr("GETDEL", err)
	}
	return b, nil
}

// Delete implements storage.Cache (on a Cluster, one DEL per slot).
func (r *Redis) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if r.cluster != nil && !sameSlot(keys) {
		return mapErr("DEL", r.guard(ctx, r.opTimeout, func(ctx context.Context) error {
			_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.Del(ctx, r.key(k))
				}
				return nil
			})
			return err
		}))
	}
	args := make([]any, 0, 1+len(keys))
	args = append(args, "del")
	for _, k := range keys {
		args = append(args, r.key(k))
	}
	return mapErr("DEL", r.run(ctx, r.opTimeout, redis.NewIntCmd(ctx, args...)))
}

// sameSlot reports whether keys all hash to the slot of the first, as far
// as their hash tags tell: keys without a tag are compared whole.
func sameSlot(keys []string) bool {
	slotOf := func(k string) string {
		if tag, ok := storage.HashTag(k); ok {
			return tag
		}
		return "\x00" + k
	}
	first := slotOf(keys[0])
	for _, k := range keys[1:] {
		if slotOf(k) != first {
			return false
		}
	}
	return true
}

// Incr implements storage.Cache with one Lua script, so that a new counter
// gets its expiry in the same atomic step as its first increment.
func (r *Redis) Incr(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	if err := checkTTL(ttl); err != nil {
		return 0, err
	}
	var n int64
	err := r.guard(ctx, r.opTimeout, func(ctx context.Context) error {
		var err error
		n, err = r.incr.Run(ctx, r.rdb, []string{r.key(key)}, ceilMillis(ttl).Milliseconds()).Int64()
		return err
	})
	if err != nil {
		return 0, mapErr("INCR", err)
	}
	return n, nil
}

// Publish implements storage.Cache: SPUBLISH on a Cluster (sharded pub/sub:
// the message goes to the channel's shard only, not to every node), PUBLISH
// otherwise.
func (r *Redis) Publish(ctx context.Context, channel string, message []byte) error {
	return mapErr("PUBLISH", r.guard(ctx, r.opTimeout, func(ctx context.Context) error {
		if r.cluster != nil {
			return r.rdb.SPublish(ctx, r.key(channel), message).Err()
		}
		return r.rdb.Publish(ctx, r.key(channel), message).Err()
	}))
}

// Subscribe implements storage.Cache (SSUBSCRIBE on a Cluster). It returns
// once Redis has confirmed the subscription, so a message published after
// it returns is delivered. go-redis pings the connection and resubscribes
// after a reconnect; messages published meanwhile are lost. The channel
// also closes when r is closed.
func (r *Redis) Subscribe(ctx context.Context, channel string) (<-chan []byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := r.breaker.allow(); err != nil {
		return nil, err
	}
	ps, err := r.subscribe(ctx, channel)
	if err != nil {
		return nil, mapErr("SUBSCRIBE", err)
	}

	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		_ = ps.Close()
		return nil, mapErr("SUBSCRIBE", redis.ErrClosed)
	}
	r.subs.Add(1)
	r.mu.Unlock()

	// With subscriptions: go-redis reconnects a lost connection by itself
	// and subscribes again, which is seen here as a second confirmation.
	// Messages published in between are lost, so the subscription ends
	// there and the subscriber (platform.Watch) starts over, dropping what
	// it cached. On a Cluster a failover or a slot migration of the
	// channel's shard ends the subscription the same way.
	msgs := ps.ChannelWithSubscriptions()
	out := make(chan []byte)
	go func() {
		defer r.subs.Done()
		defer close(out)
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case <-r.closing:
				return
			case v, ok := <-msgs:
				if !ok {
					return
				}
				m, isMessage := v.(*redis.Message)
				if !isMessage {
					return // resubscribed after a reconnect: messages were lost
				}
				select {
				case out <- []byte(m.Payload):
				case <-ctx.Done():
					return
				case <-r.closing:
					return
				}
			}
		}
	}()
	return out, nil
}

// subscribe sends SUBSCRIBE (SSUBSCRIBE on a Cluster) and waits, within
// subscribeTimeout, for Redis to confirm it. go-redis places a Cluster
// subscription by its own copy of the slot map, follows no MOVED or ASK
// and refreshes that copy only once a minute, so after the channel's slot
// has moved (a slot migration, which also ends the subscription) it would
// go on asking the old node for a minute: a redirection reloads the map
// and the subscription is tried again shortly.
func (r *Redis) subscribe(ctx context.Context, channel string) (*redis.PubSub, error) {
	deadline := time.Now().Add(subscribeTimeout)
	for {
		var ps *redis.PubSub
		if r.cluster != nil {
			ps = r.rdb.SSubscribe(ctx, r.key(channel))
		} else {
			ps = r.rdb.Subscribe(ctx, r.key(channel))
		}
		_, err := ps.ReceiveTimeout(ctx, time.Until(deadline))
		if err == nil {
			return ps, nil
		}
		_ = ps.Close()
		if r.cluster == nil || !redirected(err) || time.Until(deadline) < subscribeRetry {
			return nil, err
		}
		// Asynchronous: the next attempt usually finds the new map.
		r.cluster.ReloadState(ctx)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.closing:
			return nil, redis.ErrClosed
		case <-time.After(subscribeRetry):
		}
	}
}

// subscribeRetry is the pause before a Cluster subscription that was
// redirected is tried again.
const subscribeRetry = 100 * time.Millisecond

// redirected reports whether a Cluster node answered that another node
// serves the slot (MOVED) or is taking it over (ASK).
func redirected(err error) bool {
	_, moved := redis.IsMovedError(err)
	_, ask := redis.IsAskError(err)
	return moved || ask
}

// Allow implements storage.Cache with redis_rate's GCRA script, which keeps
// one small key per limited key and needs no clock agreement between
// replicas (it reads Redis' TIME).
func (r *Redis) Allow(ctx context.Context, key string, limit storage.Limit) (bool, time.Duration, error) {
	n, retry, err := r.AllowAtMost(ctx, key, limit, 1)
	return n == 1, retry, err
}

// AllowAtMost implements storage.Cache with redis_rate's AllowAtMost
// script: the same GCRA state as Allow, n events taken in one call.
func (r *Redis) AllowAtMost(ctx context.Context, key string, limit storage.Limit, n int) (int, time.Duration, error) {
	if err := checkLimit(limit); err != nil {
		return 0, 0, err
	}
	if n < 1 {
		return 0, 0, fmt.Errorf("cache: AllowAtMost of %d events", n)
	}
	var res *redis_rate.Result
	err := r.guard(ctx, r.opTimeout, func(ctx context.Context) error {
		var err error
		res, err = r.limiter.AllowAtMost(ctx, r.key(key), redis_rate.Limit{
			Rate:   limit.Rate,
			Period: limit.Period,
			Burst:  limit.Burst,
		}, n)
		return err
	})
	if err != nil {
		return 0, 0, mapErr("rate limit", err)
	}
	if res.Allowed > 0 {
		return res.Allowed, 0, nil
	}
	// The script computes in float seconds; a refusal must still tell the
	// caller to wait, however little.
	return 0, max(res.RetryAfter, time.Millisecond), nil
}

// Ping implements storage.Cache. On a Cluster it pings every master: a
// site's keys may live on any of them.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.breaker.allow(); err != nil {
		return err
	}
	return mapErr("PING", r.ping(ctx))
}

// ping is Ping without the breaker: the breaker's probe.
func (r *Redis) ping(ctx context.Context) error {
	if r.cluster != nil {
		return r.cluster.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			return c.Ping(ctx).Err()
		})
	}
	return r.rdb.Ping(ctx).Err()
}

// Close ends every subscription, waits for them, and closes the connection
// pool. Calls on a closed Redis fail with an error wrapping
// storage.ErrUnavailable; closing again returns the first Close's result.
func (r *Redis) Close() error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		close(r.closing)
		r.mu.Unlock()
		r.subs.Wait()
		r.closeErr = r.rdb.Close()
		r.opShared.stop()
		r.readShared.stop()
	})
	return r.closeErr
}

// mapErr translates go-redis errors into the storage vocabulary: redis.Nil
// is a miss, and anything that means "Redis cannot answer now" wraps
// storage.ErrUnavailable, so that the edges answer 503 (DESIGN §4). The
// original error stays in the chain for errors.Is and for the log.
func mapErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redis.Nil):
		return storage.ErrCacheMiss
	case errors.Is(err, storage.ErrUnavailable):
		// The breaker's answer: unavailable already.
		return fmt.Errorf("cache: redis %s: %w", op, err)
	case unavailable(err):
		return fmt.Errorf("cache: redis %s: %w: %w", op, storage.ErrUnavailable, err)
	default:
		return fmt.Errorf("cache: redis %s: %w", op, err)
	}
}

func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		// The caller gave up; that says nothing about Redis.
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		// Redis answered. Most replies are errors of the request (wrong
		// type, not an integer); only these say the server cannot serve it
		// now. OOM is among them: deployments run with noeviction, so a full
		// Redis refuses writes until it has room again.
		return redis.IsLoadingError(err) || redis.IsClusterDownError(err) ||
			redis.IsTryAgainError(err) || redis.IsMasterDownError(err) ||
			redis.IsMaxClientsError(err) || redis.IsReadOnlyError(err) ||
			redis.IsOOMError(err)
	}
	// No answer: dial and network errors, timeouts, a closed client, an
	// exhausted pool.
	return true
}

// ceilMillis rounds ttl up to whole milliseconds, Redis' resolution: rounding
// down could turn a tiny ttl into zero, which Redis reads as "no expiry" or
// "expire now".
func ceilMillis(ttl time.Duration) time.Duration {
	return (ttl + time.Millisecond - 1).Truncate(time.Millisecond)
}
