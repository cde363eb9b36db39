package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// MaxURL bounds a callback URL's length, in bytes.
const MaxURL = 2048

// ErrNotAllowed is what Allowed wraps when a URL's host is not in the list: the jobs API
// answers it as callback_not_allowed.
var ErrNotAllowed = errors.New("callback host not allowed")

// Allowed says whether a callback may go to rawURL: an absolute http or https URL, without
// user information, whose host is one of hosts, compared without regard to case. An entry
// "host" allows the host on any port; "host:port" that port only (a URL without a port has
// its scheme's: 80 or 443). No entry, no callback. The host is compared as written, never
// resolved: the operator lists the names (or addresses) a callback may reach, and a redirect,
// which could lead elsewhere, is never followed (Sender). Errors name the host, never the
// path or query, which may hold a receiver's token.
func Allowed(rawURL string, hosts []string) error {
	if len(rawURL) > MaxURL {
		return fmt.Errorf("the callback URL is longer than %d bytes", MaxURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return errors.New("the callback URL cannot be read as a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("the callback URL must be http or https")
	}
	if u.User != nil {
		return errors.New("the callback URL must not hold a user name or password")
	}
	if u.Opaque != "" || u.Host == "" {
		return errors.New("the callback URL must name a host: http(s)://host[:port]/path")
	}
	if len(hosts) == 0 {
		return fmt.Errorf("%w: callbacks are off here (OCR_CALLBACK_HOSTS is unset)", ErrNotAllowed)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	for _, h := range hosts {
		eh, ep := splitEntry(h)
		if eh == host && (ep == "" || ep == port) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is not in OCR_CALLBACK_HOSTS", ErrNotAllowed, u.Host)
}

// splitEntry is an allowlist entry's host, lower case and without brackets, and its port ("":
// any).
func splitEntry(e string) (host, port string) {
	e = strings.ToLower(strings.TrimSpace(e))
	if h, p, err := net.SplitHostPort(e); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(e, "["), "]"), ""
}

// CheckHosts checks an allowlist as an operator wrote it (OCR_CALLBACK_HOSTS): each entry a
// host name or address, with a port or without, and nothing else (no scheme, path or
// wildcard), so that a mistake is said at start instead of refusing every callback.
func CheckHosts(hosts []string) error {
	for i, e := range hosts {
		h, p := splitEntry(e)
		switch {
		case h == "":
			return fmt.Errorf("entry %d is empty", i+1)
		case strings.ContainsAny(h, "/*@?#") || strings.Contains(e, "://"):
			return fmt.Errorf("entry %d (%q) must be a host or host:port, without a scheme, path or wildcard", i+1, e)
		case p != "" && !digits(p):
			return fmt.Errorf("entry %d (%q) has a port that is not a number", i+1, e)
		case strings.Contains(h, ":") && net.ParseIP(h) == nil:
			return fmt.Errorf("entry %d (%q) is neither host, host:port, nor an IPv6 address in [brackets]", i+1, e)
		}
	}
	return nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return len(s) > 0 && len(s) <= 5
}
