// Command fleetgraph is the fleetgraph server and its administration tool:
//
//	fleetgraph serve       run the HTTP server (GraphQL, REST v1 APIs)
//	fleetgraph migrate     apply database migrations and exit
//	fleetgraph bootstrap   create a data owner, an org_admin user and key
//	fleetgraph import      load an NDJSON file of documents into a data owner
//	fleetgraph expire      run one retention pass (expired documents, partitions) and exit
//	fleetgraph analyze     replay anomaly detection over stored measurements
//	fleetgraph openapi     write the REST APIs' OpenAPI documents
//	fleetgraph sdl         write the Apollo Federation subgraph schema
//
// Configuration comes from the environment, each variable also a flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "fleetgraph:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitCode is the process exit status of an error run returned: its own
// (an import that skipped bad lines) or 1.
func exitCode(err error) int {
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

var errUsage = errors.New("usage")

const usage = `fleetgraph — fleet management and measurement data server

Usage:
  fleetgraph serve [flags]                 run the server
  fleetgraph migrate [flags]               apply database migrations and exit
  fleetgraph bootstrap --data-owner NAME --email EMAIL [--json] [flags]
                                           create a data owner (if missing), an org_admin
                                           user and an org_admin API key, and print the key
  fleetgraph import --data-owner NAME --kind KIND [flags] FILE.ndjson
                                           load documents (one JSON object a line; FILE - reads
                                           stdin) of a kind: measurement, client_report, event_bundle,
                                           network_request, user_feedback, anomaly_event, system_status;
                                           bad lines are reported by number and skipped. Exit
                                           status 0: all loaded, 2: loaded but some lines bad,
                                           1: nothing loaded or an error
  fleetgraph expire [flags]                run one retention pass now and exit: create the coming
                                           months' partitions, drop or empty what is older than each
                                           data owner's retention_days (else --retention-days)
  fleetgraph analyze --data-owner NAME [--since TIME] [--rule ID] [flags]
                                           replay anomaly detection over the stored measurements
                                           in time order (deterministic: the same episode ids)
  fleetgraph openapi [--out DIR]           write the REST APIs' OpenAPI documents (also served
                                           at <base>/openapi.json) into DIR; no database needed
  fleetgraph sdl [--out FILE]              write the Apollo Federation subgraph schema (what
                                           _service { sdl } answers; docs/federation.md) to FILE
                                           or stdout; no database needed

  fleetgraph --version                     print the version and exit

Run "fleetgraph <command> -h" for the flags of a command.
`

// run runs the command args name. A command's -h prints its flags and
// succeeds.
func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errUsage
	}
	err := command(ctx, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func command(ctx context.Context, args []string) error {
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:])
	case "migrate":
		return migrate(ctx, args[1:])
	case "bootstrap":
		return bootstrap(ctx, args[1:], os.Stdout)
	case "import":
		return importDocs(ctx, args[1:], os.Stdin, os.Stdout, os.Stderr)
	case "expire":
		return expire(ctx, args[1:], os.Stdout)
	case "analyze":
		return analyze(ctx, args[1:], os.Stdout, os.Stderr)
	case "openapi":
		return openapi(args[1:], os.Stdout)
	case "sdl":
		return sdl(args[1:], os.Stdout)
	case "help", "-h", "--help":
		fmt.Fprint(os.Stdout, usage)
		return nil
	case "version", "-version", "--version":
		fmt.Fprintln(os.Stdout, "fleetgraph", version())
		return nil
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", args[0], usage)
		return errUsage
	}
}

// parseFlags parses a command's flags: -h answers flag.ErrHelp (run
// succeeds), a bad flag errUsage (the flag package has said why), and an
// argument that is not a flag an error naming it.
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := parseBriefly(fs, func() error { return fs.Parse(args) })
	switch {
	case errors.Is(err, flag.ErrHelp):
		return err
	case err != nil:
		return errUsage
	case fs.NArg() > 0:
		return fmt.Errorf("fleetgraph %s takes flags only (such as --name value), got the argument %q; run fleetgraph %s -h",
			fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}

// parseBriefly runs parse (fs.Parse, once or more) with fs's usage held
// back: -h prints it in full; a bad flag prints the flag package's one line
// and where the flags are listed, so that the error does not scroll away
// above some 70 lines of flags.
func parseBriefly(fs *flag.FlagSet, parse func() error) error {
	usage := fs.Usage
	fs.Usage = func() {}
	err := parse()
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp) && usage != nil:
		usage()
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(fs.Output(), "Usage of fleetgraph %s:\n", fs.Name())
		fs.PrintDefaults()
	case err != nil:
		fmt.Fprintf(fs.Output(), "see fleetgraph %s -h for its flags\n", fs.Name())
	}
	return err
}

// version is the module version and VCS revision the binary was built from.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			v += " " + s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			v += " (modified)"
		}
	}
	return v
}
