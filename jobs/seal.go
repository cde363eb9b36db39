package jobs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// KeySize is the length of OCR_JOBS_KEY once base64-decoded: AES-256.
const KeySize = 32

// ParseKey reads OCR_JOBS_KEY: the base64 (standard or URL alphabet, padded or not) of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != KeySize {
				return nil, fmt.Errorf("the key is %d bytes once decoded; want %d (openssl rand -base64 32)", len(k), KeySize)
			}
			return k, nil
		}
	}
	return nil, errors.New("the key is not base64 (openssl rand -base64 32 makes one)")
}

// sealer encrypts what a job stores (pages, readings, the patient's context, the result) with
// AES-GCM: a fresh random nonce each time, kept before the ciphertext, and the job's id and the
// record's place as additional data, so that a record copied onto another job's row, or another
// page's, does not open.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (*sealer, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return &sealer{a}, nil
}

// ad is the additional data of a job's record: "job_…/page/3", "job_…/result".
func ad(job, what string, page int) []byte {
	s := job + "/" + what
	if page > 0 {
		s += "/" + strconv.Itoa(page)
	}
	return []byte(s)
}

func (s *sealer) seal(plain, ad []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on a supported system
	}
	return s.aead.Seal(nonce, nonce, plain, ad)
}

// errSealed is a record that does not open: another key, another job's, or changed.
var errSealed = errors.New("jobs: a stored record does not open with this key")

func (s *sealer) open(box, ad []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(box) < n+s.aead.Overhead() {
		return nil, errSealed
	}
	out, err := s.aead.Open(nil, box[:n], box[n:], ad)
	if err != nil {
		return nil, errSealed
	}
	return out, nil
}
