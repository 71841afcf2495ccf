package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fleetgraph/fleetgraph/store"
)

// NewKey returns a fresh random key of the given kind, e.g. "export-3kq…".
func NewKey(kind Kind) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return string(kind) + "-" + base64.RawURLEncoding.EncodeToString(b)
}

// DefaultKeyLifetime applies when a key is created without valid_until.
const DefaultKeyLifetime = 365 * 24 * time.Hour

// NewKeyRecord makes a fresh key of kind and the row that stores it; only
// analytics keys keep a sealed copy of the key itself.
func NewKeyRecord(sealer *Sealer, kind Kind, userID int64, name *string, validUntil *time.Time, role *string) (string, store.NewAPIKey) {
	plain := NewKey(kind)
	until := time.Now().Add(DefaultKeyLifetime)
	if validUntil != nil {
		until = *validUntil
	}
	rec := store.NewAPIKey{Kind: string(kind), Name: name, Digest: Digest(plain), KeyPreview: Preview(plain),
		EffectiveRole: role, UserID: userID, ValidUntil: until}
	if kind == KindClientAnalytics {
		rec.SealedKey = sealer.Seal(plain)
	}
	return plain, rec
}

// Digest is what the database stores of a key.
func Digest(key string) []byte {
	d := sha256.Sum256([]byte(key))
	return d[:]
}

// Preview shows a key's prefix and last four characters.
func Preview(key string) string {
	prefix, _, _ := strings.Cut(key, "-")
	if len(key) < 8 {
		return prefix + "-…"
	}
	return prefix + "-…" + key[len(key)-4:]
}

// Sealer encrypts secrets that must be readable again (analytics keys,
// service credential passwords) with AES-256-GCM under the server's key.
type Sealer struct{ aead cipher.AEAD }

// NewSealer takes a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key: want 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal returns nonce||ciphertext.
func (s *Sealer) Seal(plain string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, []byte(plain), nil)
}

// Open reverses Seal.
func (s *Sealer) Open(sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("open sealed secret: too short")
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return "", fmt.Errorf("open sealed secret: %w", err)
	}
	return string(plain), nil
}
