package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"petstore/config"
)

// healthcheck asks the server on LISTEN_ADDR whether it is alive (or, with
// --ready, whether its database answers). Containers use it as their
// HEALTHCHECK, as they have no shell or curl.
func (c cli) healthcheck(ctx context.Context, args []string) int {
	var ready bool
	var target string
	_, code, ok := c.flags("healthcheck [--ready] [--url URL]", "Exits 0 when the local server answers /healthz (or /readyz with --ready) with 200 within 3 seconds, else 1.", args,
		func(fs *flag.FlagSet) {
			fs.BoolVar(&ready, "ready", false, "check /readyz (the database answers) instead of /healthz")
			fs.StringVar(&target, "url", "", "base URL of the server (default: from LISTEN_ADDR)")
		})
	if !ok {
		return code
	}
	if target == "" {
		cfg, err := config.Load(c.getenv)
		if err != nil {
			return c.fail(err)
		}
		host, port, _ := net.SplitHostPort(cfg.ListenAddr)
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = "127.0.0.1"
		}
		target = "http://" + net.JoinHostPort(host, port)
	}
	path := "/healthz"
	if ready {
		path = "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(target, "/")+path, nil)
	if err != nil {
		return c.fail(fmt.Errorf("healthcheck: %w", err))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return c.fail(fmt.Errorf("healthcheck: %w", err))
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return c.fail(fmt.Errorf("healthcheck: %s answered %s", path, res.Status))
	}
	fmt.Fprintf(c.stdout, "%s: %s\n", path, res.Status)
	return 0
}
