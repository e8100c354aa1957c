package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// help is what `lectern <command> --help` says besides the flags.
type help struct {
	// usage is the synopsis after "Usage: ", e.g.
	// "lectern keys rotate --site S [flags]".
	usage string
	// about says what the command does, in a sentence or two.
	about string
	// examples are complete command lines a reader can adapt.
	examples []string
}

// cmdFlags is one command's flag set and its help: the command's own flags
// first, then each group of shared flags it uses (Connection, Logging), so
// that a command lists only what it reads.
type cmdFlags struct {
	*flag.FlagSet
	getenv    func(string) string
	lookupEnv func(string) (string, bool)
	help      help
	groups    []flagGroup
	// envs and defs hold, for the flags that read an environment
	// variable, its name and the built-in default: help shows those, never
	// the value the environment supplied (it may be a secret, the KEK).
	envs, defs map[string]string
	// envErrs are environment values that do not parse as their flag's
	// type; parse refuses them as it refuses the same value as a flag.
	envErrs []string
	// required are the flags the command cannot run without; exclusive
	// the sets of flags of which at most one may be given.
	required  []string
	exclusive [][]string
}

// oneOf marks flags that are alternatives (--password | --password-stdin):
// parse refuses a command line with more than one as a usage error.
func (c *cmdFlags) oneOf(names ...string) { c.exclusive = append(c.exclusive, names) }

// require marks flags the command cannot run without: parse refuses a
// command line without them as a usage error (exit 2).
func (c *cmdFlags) require(names ...string) { c.required = append(c.required, names...) }

// fromEnv parses the environment value s of a flag with parse; a value
// that does not parse is recorded, naming the variable, for parse to
// refuse: a mistyped LECTERN_KEY_ROTATION=off must not leave the default
// (the scheduler running) in force without a word.
func (c *cmdFlags) fromEnv(env, s string, parse func(string) error) {
	if s == "" {
		return
	}
	if err := parse(s); err != nil {
		c.envErrs = append(c.envErrs, fmt.Sprintf("%s=%q: %v", env, s, err))
	}
}

// envName names a flag and its variable for messages about its value,
// which may have come from either.
func (c *cmdFlags) envName(name string) string {
	if env := c.envs[name]; env != "" {
		return "--" + name + " (" + env + ")"
	}
	return "--" + name
}

type flagGroup struct {
	title string
	names []string
}

func newCmdFlags(env *cmdEnv, name string, h help) *cmdFlags {
	c := &cmdFlags{
		FlagSet:   flag.NewFlagSet("lectern "+name, flag.ContinueOnError),
		getenv:    env.getenv,
		lookupEnv: env.lookupEnv,
		help:      h,
		envs:      map[string]string{},
		defs:      map[string]string{},
	}
	c.SetOutput(env.stderr)
	// The flag package calls Usage for -h and after a bad flag: parse
	// prints the help for the one, a pointer to it after the other.
	c.Usage = func() {}
	return c
}

// group runs define and files the flags it defines under title.
func (c *cmdFlags) group(title string, define func()) {
	before := map[string]bool{}
	c.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
	define()
	g := flagGroup{title: title}
	c.VisitAll(func(f *flag.Flag) {
		if !before[f.Name] {
			g.names = append(g.names, f.Name)
		}
	})
	c.groups = append(c.groups, g)
}

// The env-backed definitions: the environment variable, when set, is the
// flag's default; the flag on the command line wins.

func (c *cmdFlags) str(p *string, name, env, def, usage string) {
	v := c.getenv(env)
	if v == "" {
		v = def
	}
	c.StringVar(p, name, v, usage)
	c.envs[name], c.defs[name] = env, def
}

// strOrNone is str for a setting where the empty value means "none"
// (--metrics-addr ""): the environment variable set to "" gives "" as the
// empty flag does, where str would take the default.
func (c *cmdFlags) strOrNone(p *string, name, env, def, usage string) {
	v, ok := c.lookupEnv(env)
	if !ok {
		v = def
	}
	c.StringVar(p, name, v, usage)
	c.envs[name], c.defs[name] = env, def
}

// checkedValue is a flag's value whose parse error says what the flag
// expects (the flag package's own types say "parse error"), as the same
// value from the environment does.
type checkedValue struct {
	// typ is the type the help names; "" for a boolean.
	typ string
	set func(string) error
	get func() string
}

func (v *checkedValue) Set(s string) error { return v.set(s) }
func (v *checkedValue) IsBoolFlag() bool   { return v.typ == "" }
func (v *checkedValue) String() string {
	if v == nil || v.get == nil {
		return ""
	}
	return v.get()
}

// checkedVar defines the flag name of type typ over p, starting at v.
func checkedVar[T any](c *cmdFlags, p *T, v T, typ, name, usage string, parse func(string) (T, error), format func(T) string) {
	*p = v
	c.Var(&checkedValue{typ: typ, get: func() string { return format(*p) }, set: func(s string) error {
		x, err := parse(s)
		if err == nil {
			*p = x
		}
		return err
	}}, name, usage)
}

// fromEnvAs is fromEnv for a value parse reads, stored in v.
func fromEnvAs[T any](c *cmdFlags, env string, v *T, parse func(string) (T, error)) {
	c.fromEnv(env, c.getenv(env), func(s string) error {
		x, err := parse(s)
		if err == nil {
			*v = x
		}
		return err
	})
}

func parseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, errors.New("not a boolean (true or false, 1 or 0)")
	}
	return b, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("not a duration (such as 90s, 5m or 24h)")
	}
	return d, nil
}

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errors.New("not a whole number")
	}
	return n, nil
}

func (c *cmdFlags) boolean(p *bool, name, env string, def bool, usage string) {
	v := def
	fromEnvAs(c, env, &v, parseBool)
	checkedVar(c, p, v, "", name, usage, parseBool, strconv.FormatBool)
	c.envs[name], c.defs[name] = env, strconv.FormatBool(def)
}

// duration defines an env-backed duration flag; the environment's value
// is read as the flag reads its own, and refused as the flag refuses it.
func (c *cmdFlags) duration(p *time.Duration, name, env string, def time.Duration, usage string) {
	c.durationFrom(p, name, env, def, usage)
}

// durationOrZero is duration for a setting where zero is meaningful
// ("none"): the environment may set it to 0s.
func (c *cmdFlags) durationOrZero(p *time.Duration, name, env string, def time.Duration, usage string) {
	c.durationFrom(p, name, env, def, usage)
}

func (c *cmdFlags) durationFrom(p *time.Duration, name, env string, def time.Duration, usage string) {
	v := def
	fromEnvAs(c, env, &v, parseDuration)
	checkedVar(c, p, v, "duration", name, usage, parseDuration, time.Duration.String)
	c.envs[name], c.defs[name] = env, def.String()
}

func (c *cmdFlags) integer(p *int, name, env string, def int, usage string) {
	v := def
	fromEnvAs(c, env, &v, parseInt)
	checkedVar(c, p, v, "int", name, usage, parseInt, strconv.Itoa)
	c.envs[name], c.defs[name] = env, strconv.Itoa(def)
}

// errUsage reports that the problem was printed already (exit 2); errHelp
// that the help was asked for and printed (exit 0).
var (
	errUsage = errors.New("usage")
	errHelp  = errors.New("help")
)

// parse parses args; -h and --help print the help and yield errHelp, a bad
// flag or a stray argument errUsage.
func (c *cmdFlags) parse(args []string) error {
	if err := c.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.printHelp(c.Output())
			return errHelp
		}
		fmt.Fprintf(c.Output(), "Run '%s --help' for usage.\n", c.Name())
		return errUsage
	}
	if c.NArg() > 0 {
		fmt.Fprintf(c.Output(), "unexpected arguments: %v\nRun '%s --help' for usage.\n", c.Args(), c.Name())
		return errUsage
	}
	if len(c.envErrs) > 0 {
		for _, e := range c.envErrs {
			fmt.Fprintf(c.Output(), "%s: environment variable %s\n", c.Name(), e)
		}
		return errUsage
	}
	set := map[string]bool{}
	c.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var missing []string
	for _, n := range c.required {
		if !set[n] {
			missing = append(missing, "--"+n)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(c.Output(), "%s: missing %s\nRun '%s --help' for usage.\n", c.Name(), strings.Join(missing, ", "), c.Name())
		return errUsage
	}
	for _, set1 := range c.exclusive {
		var given []string
		for _, n := range set1 {
			if set[n] {
				given = append(given, "--"+n)
			}
		}
		if len(given) > 1 {
			fmt.Fprintf(c.Output(), "%s: %s are alternatives; give one\n", c.Name(), strings.Join(given, " and "))
			return errUsage
		}
	}
	return nil
}

// helpWidth is where help text wraps.
const helpWidth = 100

func (c *cmdFlags) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\n", c.help.usage)
	if c.help.about != "" {
		fmt.Fprintln(w, wrap(c.help.about, 0, helpWidth))
		fmt.Fprintln(w)
	}
	// A flag defined outside every group is the command's own.
	grouped := map[string]bool{}
	for _, g := range c.groups {
		for _, n := range g.names {
			grouped[n] = true
		}
	}
	var own []string
	c.VisitAll(func(f *flag.Flag) {
		if !grouped[f.Name] {
			own = append(own, f.Name)
		}
	})
	groups := append([]flagGroup{{title: "Flags", names: own}}, c.groups...)
	for _, g := range groups {
		if len(g.names) == 0 {
			continue
		}
		// One column for the usage texts of the group.
		width := 0
		for _, n := range g.names {
			width = max(width, len(c.flagName(c.Lookup(n))))
		}
		fmt.Fprintf(w, "%s:\n", g.title)
		for _, n := range g.names {
			f := c.Lookup(n)
			fmt.Fprintf(w, "%-*s  %s\n", width, c.flagName(f), wrap(c.flagUsage(f), width+2, helpWidth))
		}
		fmt.Fprintln(w)
	}
	switch len(c.help.examples) {
	case 0:
	case 1:
		fmt.Fprintln(w, "Example:")
	default:
		fmt.Fprintln(w, "Examples:")
	}
	if len(c.help.examples) > 0 {
		for _, e := range c.help.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// flagName is the left column of a flag's line: "  --name type".
func (c *cmdFlags) flagName(f *flag.Flag) string {
	typ, _ := unquoteUsage(f)
	if typ == "" {
		return "  --" + f.Name
	}
	return "  --" + f.Name + " " + typ
}

// flagUsage is the right column: the usage, then the built-in default and
// the environment variable, if any.
func (c *cmdFlags) flagUsage(f *flag.Flag) string {
	typ, usage := unquoteUsage(f)
	var notes []string
	def, env := c.defs[f.Name], c.envs[f.Name]
	if env == "" {
		def = f.DefValue
	}
	if def != "" && def != "false" && def != "0" && def != "0s" {
		if typ == "string" {
			def = strconv.Quote(def)
		}
		notes = append(notes, "default "+def)
	}
	if env != "" {
		notes = append(notes, "env "+env)
	}
	if len(notes) > 0 {
		usage += " (" + strings.Join(notes, "; ") + ")"
	}
	return usage
}

// unquoteUsage is flag.UnquoteUsage, naming the type of a checkedValue.
func unquoteUsage(f *flag.Flag) (string, string) {
	typ, usage := flag.UnquoteUsage(f)
	if v, ok := f.Value.(*checkedValue); ok && !strings.Contains(f.Usage, "`") {
		typ = v.typ
	}
	return typ, usage
}

// wrap breaks s into lines of at most width columns; lines after the first
// are indented by indent (the first starts there already).
func wrap(s string, indent, width int) string {
	var b strings.Builder
	col := indent
	for i, word := range strings.Fields(s) {
		if i > 0 {
			if col+1+len(word) > width && col > indent {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(word)
		col += len(word)
	}
	return b.String()
}
