// Command apibench measures fleetgraph's GraphQL and REST client APIs side
// by side with its peers on the same database (bench/api.sh starts the
// servers and runs it): a hand-written chi + pgx handler, the limit, on all
// workloads, and PostGraphile 5 and 4 on the GraphQL ones. It first checks
// that every peer answers each workload as fleetgraph does (the
// hand-written handler: the same bytes; PostGraphile: the same data), then
// runs fixed-duration rounds of -conns concurrent keep-alive connections,
// fleetgraph's interleaved with each peer's, and prints per workload and
// peer the median throughput, p50 latency and fleetgraph's ratio,
// fleetgraph's statements per request and its peak RSS under the list loads.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"sort"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "apibench:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	fleetgraph, postgraphile, postgraphile5 string
	handwritten                             string
	databaseURL, keysFile, fleetgraphBin    string
	fleetgraphPID, conns, rounds            int
	round, warmup, timeout                  time.Duration
	only                                    string
	loadAtStart                             string // the machine's load averages when the run began
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("apibench", flag.ContinueOnError)
	fs.StringVar(&o.fleetgraph, "fleetgraph", "http://127.0.0.1:18080", "fleetgraph's base URL")
	fs.StringVar(&o.postgraphile, "postgraphile", "http://127.0.0.1:18081", "PostGraphile 4's base URL")
	fs.StringVar(&o.postgraphile5, "postgraphile5", "http://127.0.0.1:18083", "PostGraphile 5's base URL")
	fs.StringVar(&o.handwritten, "handwritten", "http://127.0.0.1:18082", "the hand-written handler's base URL")
	fs.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "the bench database (env DATABASE_URL)")
	fs.StringVar(&o.keysFile, "keys", "", "output of `fleetgraph bootstrap --json`, one line per data owner")
	fs.StringVar(&o.fleetgraphBin, "fleetgraph-bin", "", "fleetgraph binary for statements per request (empty: not measured)")
	fs.IntVar(&o.fleetgraphPID, "fleetgraph-pid", 0, "pid of the fleetgraph server, for its peak RSS (0: not measured)")
	fs.IntVar(&o.conns, "conns", 20, "concurrent connections per side")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds per side and workload (A,B,A,B,…)")
	fs.DurationVar(&o.round, "round", 5*time.Second, "duration of a round")
	fs.DurationVar(&o.warmup, "warmup", 5*time.Second, "untimed warm-up per side and workload")
	fs.DurationVar(&o.timeout, "timeout", 3*time.Minute, "time limit of one request")
	fs.StringVar(&o.only, "only", "", "run only the workloads whose name matches this regular expression")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.keysFile == "" || o.databaseURL == "" {
		return o, errors.New("-keys and -database-url are required")
	}
	return o, nil
}

func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	o.loadAtStart = loadAverage()
	s, err := loadSetup(ctx, o)
	if err != nil {
		return err
	}
	ws := workloads(s)
	if o.only != "" {
		re, err := regexp.Compile(o.only)
		if err != nil {
			return fmt.Errorf("-only: %w", err)
		}
		ws = filter(ws, re)
	}
	client := newClient(o.conns, o.timeout)
	if err := checkAll(ctx, client, ws); err != nil {
		return err
	}
	stmts, err := statements(ctx, o, client, ws)
	if err != nil {
		return err
	}
	results := make([]result, 0, len(ws))
	for _, w := range ws {
		r, err := measure(ctx, o, w)
		if err != nil {
			return err
		}
		r.statements = stmts[w.name]
		results = append(results, r)
	}
	report(os.Stdout, o, results)
	return nil
}

func filter(ws []workload, re *regexp.Regexp) []workload {
	var out []workload
	for _, w := range ws {
		if re.MatchString(w.name) {
			out = append(out, w)
		}
	}
	return out
}

// owner is one of the bench's data owners and an admin key of it.
type owner struct {
	slug    string
	id      int64
	key     string
	clients int
}

// loadSetup reads the keys and asks the database how many clients each
// owner has and which client the by-id workloads ask for.
func loadSetup(ctx context.Context, o options) (setup, error) {
	s := setup{fleetgraph: o.fleetgraph, postgraphile: o.postgraphile, postgraphile5: o.postgraphile5, handwritten: o.handwritten}
	owners, err := readKeys(o.keysFile)
	if err != nil {
		return s, err
	}
	conn, err := pgx.Connect(ctx, o.databaseURL)
	if err != nil {
		return s, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	for i := range owners {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM clients WHERE data_owner_id = $1`, owners[i].id).Scan(&owners[i].clients); err != nil {
			return s, fmt.Errorf("count clients: %w", err)
		}
	}
	sort.Slice(owners, func(i, j int) bool { return owners[i].clients < owners[j].clients })
	s.owners = owners
	big := owners[len(owners)-1]
	const q = `SELECT id FROM clients WHERE data_owner_id = $1 ORDER BY id OFFSET $2 LIMIT 1`
	if err := conn.QueryRow(ctx, q, big.id, big.clients/2).Scan(&s.clientID); err != nil {
		return s, fmt.Errorf("pick a client of %s: %w", big.slug, err)
	}
	return s, nil
}

func readKeys(path string) ([]owner, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []owner
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var k struct {
			DataOwner   string `json:"data_owner"`
			DataOwnerID int64  `json:"data_owner_id"`
			APIKey      string `json:"api_key"`
		}
		if err := json.Unmarshal(sc.Bytes(), &k); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, owner{slug: k.DataOwner, id: k.DataOwnerID, key: k.APIKey})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no keys", path)
	}
	return out, sc.Err()
}
