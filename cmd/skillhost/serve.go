package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost"
	"github.com/skillhost/skillhost/registry"
	"github.com/skillhost/skillhost/server"
	"github.com/skillhost/skillhost/server/serveconf"
)

// DefaultServeAddr is where `skillhost serve` listens without --http or
// --stdio.
const DefaultServeAddr = "127.0.0.1:8787"

type serveFlags struct {
	stdio  bool
	http   string
	tenant string
	otlp   string
	watch  time.Duration
}

// metricsTokenEnv names the variable holding the bearer token /metrics
// asks for on a server with tenants.
const metricsTokenEnv = "SKILLHOST_METRICS_TOKEN"

func newServeCmd(g *globals) *cobra.Command {
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the tools and skills over MCP (stdio or streamable HTTP)",
		Long: `Serve the loaded packs' tools and skills to MCP clients: with --stdio to one
client that started skillhost (Claude Desktop, VS Code), else as streamable
HTTP at http://ADDR/mcp (default ` + DefaultServeAddr + `).

Each MCP session is one run: tools/list is its visible catalog, deferred
tools are found with tool_search and activated by their first call. A client
of the stateless 2026-07-28 revision gets a run per request.

Without [tenants] in skillhost.toml one local tenant is served, without
authentication, on loopback only; a non-loopback address needs tenants with
API keys ("skillhost serve keygen" makes one) or [server.oauth] (OAuth access
tokens of an authorization server), and [server] allowed_hosts.
SIGINT or SIGTERM stops taking calls and lets the calls in flight finish
([server] drain_timeout); SIGHUP reloads the packs.`,
		Example: `  skillhost serve --stdio
  skillhost serve --http 127.0.0.1:8787
  skillhost serve keygen`,
		Args:        noArgs,
		Annotations: map[string]string{longRunning: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if sf.stdio && cmd.Flags().Changed("http") {
				return usageErr("--stdio and --http are two ways to serve; give one")
			}
			return serve(cmd.Context(), g, &sf)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&sf.stdio, "stdio", false, "serve one client on standard input and output")
	f.StringVar(&sf.http, "http", DefaultServeAddr, "serve streamable HTTP at `ADDR` (host:port), endpoint /mcp")
	f.StringVar(&sf.tenant, "tenant", "", "with --stdio, the tenant `ID` to serve (needed when several are configured)")
	f.StringVar(&sf.otlp, "otlp-endpoint", "", "export traces over OTLP/HTTP to `URL` (default: [server] otlp_endpoint, else $OTEL_EXPORTER_OTLP_ENDPOINT; off when none is set)")
	f.DurationVar(&sf.watch, "watch", server.DefaultWatchInterval, "look for changed pack files every `DURATION` and reload them (0 turns it off)")
	cmd.AddCommand(newKeygenCmd(g))
	return cmd
}

func newKeygenCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "keygen",
		Short: "Make an API key for a tenant and print the hash to configure",
		Long: `Make a random API key and print it once, with the line to put in the
tenant's [tenants.<id>] section: skillhost.toml holds only the key's SHA-256
hash, so the key cannot be read back from it. Give the key to the tenant,
who sends it as "Authorization: Bearer <key>".`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var b [32]byte
			rand.Read(b[:])
			key := "sk_" + base64.RawURLEncoding.EncodeToString(b[:])
			fmt.Fprintf(g.stdout, "key:  %s\nhash: %s\n\nin skillhost.toml:\n  [tenants.<id>]\n  api_keys = [%q]\n", key, serveconf.HashKey(key), serveconf.HashKey(key))
			return nil
		},
	}
}

func serve(ctx context.Context, g *globals, sf *serveFlags) error {
	logger := slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if !g.stderrTTY {
		logger = slog.New(slog.NewJSONHandler(g.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	hub := server.NewEventHub(registry.SlogSink{Logger: logger})
	e, err := openEngine(ctx, g, func(cfg *skillhost.Config) { cfg.Events = hub })
	if err != nil {
		return err
	}
	defer e.Close(context.Background())
	otlp := sf.otlp
	if otlp == "" {
		otlp = serveconf.Of(e.Operator()).Server.OTLPEndpoint
	}
	tp, err := server.NewTracerProvider(ctx, otlp, buildVersion().Version)
	if err != nil {
		return usageErr("%s", message(err))
	}
	opts := &server.Options{Logger: logger, Version: buildVersion().Version, StdioTenant: sf.tenant, Events: hub,
		MetricsToken: os.Getenv(metricsTokenEnv)}
	if tp != nil {
		opts.TracerProvider = tp
		defer tp.Shutdown(context.Background())
	}
	srv, err := server.New(e, opts)
	if err != nil {
		return usageErr("%s", message(err))
	}
	defer srv.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go reloadOnHangup(ctx, srv, logger)
	if sf.watch > 0 {
		go srv.WatchPacks(ctx, sf.watch)
	}
	warm := func() {
		rep, err := srv.Warm(ctx, g.compiling)
		if err != nil {
			logger.Warn("warming the compilation cache", "err", err)
			return
		}
		logger.Info("ready", "modules", rep.Modules, "failed", len(rep.Failed), "duration_ms", rep.Duration.Milliseconds())
	}
	if sf.stdio {
		warm()
		return srv.ServeStdio(ctx, g.stdin, g.stdout)
	}
	if err := srv.CheckListen(sf.http); err != nil {
		return usageErr("%s", message(err))
	}
	ln, err := net.Listen("tcp", sf.http)
	if err != nil {
		return usageErr("listening on %s: %v", sf.http, err)
	}
	ln = srv.Listener(ln)
	hs := srv.HTTPServer()
	fmt.Fprintf(g.stderr, "skillhost: serving MCP at http://%s%s\n", ln.Addr(), server.MCPPath)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	go warm() // /readyz says ready once every module is compiled
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	drain := serveconf.Of(e.Operator()).Server.DrainTimeout
	if drain == 0 {
		drain = serveconf.DefaultDrainTimeout
	}
	dctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	logger.Info("draining calls in flight", "timeout", drain.String())
	derr := srv.Shutdown(dctx)
	if err := hs.Shutdown(dctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return derr
}

// reloadOnHangup reloads the packs on SIGHUP until ctx is done.
func reloadOnHangup(ctx context.Context, srv *server.Server, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := srv.Reload(ctx); err != nil {
				logger.Error("reloading packs", "err", err)
				continue
			}
			logger.Info("packs reloaded")
		}
	}
}
