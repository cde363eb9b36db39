package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/webhook"
)

// verify is docs/clients.md's receiver, word for word: what a receiver outside this module
// writes with the standard library alone. The example keeps it honest.
func verify(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	ts, terr := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil || terr != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false // a bad secret, or a message too old (a replay) or from the future
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.%s", h.Get("webhook-id"), ts, body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

// A receiver checks each callback before it trusts the body: the headers are signed with the
// secret both sides hold (OCR_WEBHOOK_SECRET).
func Example_verify() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"id":"job_x","status":"succeeded"}`)
	sec, _ := webhook.ParseSecret(secret)
	now := time.Now()
	sig, _ := sec.Sign("msg_job_x", now, body)
	h := http.Header{}
	h.Set("webhook-id", "msg_job_x")
	h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	h.Set("webhook-signature", sig)

	fmt.Println(verify(secret, h, body), sec.Verify(h, body, now, 0) == nil)
	fmt.Println(verify(secret, h, []byte(`{"id":"job_x","status":"failed"}`)))
	// Output:
	// true true
	// false
}
