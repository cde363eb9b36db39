// Package webhook sends a job's callback as the Standard Webhooks specification
// (https://www.standardwebhooks.com/, version 1.0.0) says, and verifies one as a receiver
// would: the headers webhook-id, webhook-timestamp and webhook-signature, the signature
// "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>" under a secret written "whsec_<base64>".
//
// A callback URL comes from a caller, so it is a door into the operator's network (SSRF):
// only hosts the operator lists are called (Allowed), redirects are never followed, and the
// receiver's answer is read to a bound and thrown away. Nothing here logs; no error carries
// a body, sent or received, nor the URL's path or query.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a message, as the specification names them.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks a symmetric secret in its serialised form.
const secretPrefix = "whsec_"

// The key's length, in bytes, as the specification bounds it: at least 24 (192 bits), at most
// 64 (512 bits).
const (
	minKey = 24
	maxKey = 64
)

// DefaultTolerance is how far a message's timestamp may be from the receiver's clock, either
// way, for Verify to accept it: the standard libraries' five minutes. Older messages are
// refused, so a captured message cannot be replayed later.
const DefaultTolerance = 5 * time.Minute

// Secret is the key that signs messages, parsed once from its "whsec_" form. Its String and
// LogValue never show the key.
type Secret struct{ key []byte }

// ParseSecret reads a secret written "whsec_<base64 of 24 to 64 bytes>" (the prefix may be
// left out, as the standard libraries allow). The error never repeats the value.
func ParseSecret(s string) (Secret, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, secretPrefix)
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return Secret{}, errors.New("want whsec_ followed by standard base64 (openssl rand -base64 32), which this is not")
	}
	if len(key) < minKey || len(key) > maxKey {
		return Secret{}, fmt.Errorf("want a key of %d to %d bytes after whsec_, got %d bytes", minKey, maxKey, len(key))
	}
	return Secret{key: key}, nil
}

// IsZero reports whether s holds no key (it was never parsed).
func (s Secret) IsZero() bool { return len(s.key) == 0 }

// String never shows the key.
func (s Secret) String() string {
	if s.IsZero() {
		return "unset"
	}
	return secretPrefix + "(redacted)"
}

// GoString never shows the key, for %#v.
func (s Secret) GoString() string { return s.String() }

// LogValue never shows the key, for slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Sign is the webhook-signature value of a message: "v1," and the base64 of the HMAC-SHA256
// of id, timestamp (unix seconds) and body, joined by full stops. An id must not be empty nor
// hold a full stop or a space, which would let one message's signature pass for another's.
func (s Secret) Sign(msgID string, ts time.Time, body []byte) (string, error) {
	if s.IsZero() {
		return "", errors.New("webhook: no secret to sign with")
	}
	if err := checkID(msgID); err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(s.mac(msgID, strconv.FormatInt(ts.Unix(), 10), body)), nil
}

func (s Secret) mac(id, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// maxID bounds a message id, sent and verified.
const maxID = 256

func checkID(id string) error {
	if id == "" || len(id) > maxID || strings.ContainsAny(id, ". \t\r\n") {
		return fmt.Errorf("webhook: a message id must be 1 to %d characters without a full stop or a space", maxID)
	}
	return nil
}

// The ways Verify refuses a message.
var (
	ErrMissingHeaders = errors.New("webhook: webhook-id, webhook-timestamp or webhook-signature is missing")
	ErrTimestamp      = errors.New("webhook: webhook-timestamp is not unix seconds within the tolerance of now")
	ErrSignature      = errors.New("webhook: no v1 signature in webhook-signature matches the message")
)

// Verify checks a received message as a receiver must: its three headers present, its
// timestamp within tolerance of now (DefaultTolerance when tolerance is 0), and one of the
// space-separated signatures of webhook-signature a v1 signature of id, timestamp and body,
// compared in constant time. body must be the bytes as received, not JSON read and written
// again.
func (s Secret) Verify(h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	if s.IsZero() {
		return errors.New("webhook: no secret to verify with")
	}
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return ErrMissingHeaders
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	want := s.mac(id, ts, body)
	for _, sig := range strings.Fields(sigs) {
		version, b64, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue // another scheme (v1a), or another version: not ours to read
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignature
}
