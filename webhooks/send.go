package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"code.dny.dev/ssrf"
)

// Sign is the Standard Webhooks signature of body sent as message msgID at
// ts: "v1," and the base64 HMAC-SHA256, keyed with the secret's bytes (the
// base64 after "whsec_"), of "msgID.ts.body".
func Sign(secret, msgID string, ts int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", msgID, ts)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// ParseCIDRs reads a comma-separated list of CIDR ranges (the operator's
// allow-list of private destinations).
func ParseCIDRs(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("webhook allowed ranges: %w", err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// NewHTTPClient is the client deliveries are sent with. Its dialer refuses
// loopback, private, link-local, metadata and other non-public addresses
// (code.dny.dev/ssrf, checked on the resolved address of every connection,
// so a DNS answer that changes is checked again) unless allow names their
// range. It follows no redirect (a redirect is a failed attempt), uses no
// proxy from the environment (a proxy would dial for it) and gives up
// after timeout.
func NewHTTPClient(timeout time.Duration, allow []netip.Prefix) *http.Client {
	var v4, v6 []netip.Prefix
	for _, p := range allow {
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	guard := ssrf.New(ssrf.WithAnyPort(), ssrf.WithAllowedV4Prefixes(v4...), ssrf.WithAllowedV6Prefixes(v6...))
	dialer := &net.Dialer{Timeout: timeout, Control: guard.Safe}
	transport := &http.Transport{Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: timeout, ResponseHeaderTimeout: timeout, MaxIdleConnsPerHost: 4,
		IdleConnTimeout: 90 * time.Second}
	return &http.Client{Transport: transport, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// maxResponseBody caps the response body kept on a delivery.
const maxResponseBody = 4096

// request is one signed HTTP request of a delivery.
type request struct {
	URL, MsgID, Secret, ContentType string
	Headers                         map[string]string
	Body                            []byte
}

// outcome is what the receiver did.
type outcome struct {
	Status     *int
	Body       *string
	Err        *string
	Duration   time.Duration
	RetryAfter time.Duration // from a Retry-After header (0: none)
}

// succeeded: a 2xx answer.
func (o outcome) succeeded() bool { return o.Status != nil && *o.Status >= 200 && *o.Status < 300 }

// send makes one attempt: POST the body, signed now.
func send(ctx context.Context, c *http.Client, r request, now time.Time) outcome {
	var o outcome
	fail := func(msg string) outcome { o.Err = &msg; return o }
	ts := now.Unix()
	sig, err := Sign(r.Secret, r.MsgID, ts, r.Body)
	if err != nil {
		return fail(err.Error())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return fail("invalid request: " + err.Error())
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", r.ContentType)
	req.Header.Set("User-Agent", "fleetgraph-webhooks/1")
	req.Header.Set("webhook-id", r.MsgID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	start := time.Now()
	resp, err := c.Do(req)
	o.Duration = time.Since(start)
	if err != nil {
		return fail(describe(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	o.Duration = time.Since(start)
	o.Status, o.Body = &resp.StatusCode, ptr(strings.ToValidUTF8(string(body), "\uFFFD"))
	if err != nil {
		return fail("reading the answer: " + describe(err))
	}
	o.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), now)
	switch {
	case o.succeeded():
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return fail(fmt.Sprintf("redirected (%d to %s): redirects are not followed", resp.StatusCode, resp.Header.Get("Location")))
	default:
		return fail(fmt.Sprintf("answered %d", resp.StatusCode))
	}
	return o
}

// describe says why a request failed without internals of the client.
func describe(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, ssrf.ErrProhibitedIP), errors.Is(err, ssrf.ErrProhibitedNetwork):
		return "refused: the URL resolves to an address that is not public (" + err.Error() + ")"
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	return err.Error()
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func ptr[T any](v T) *T { return &v }
