package tlsconf

import (
	"crypto/tls"
	"strings"
)

// openSSLNames are the OpenSSL names of the TLS 1.2 suites Go implements.
var openSSLNames = map[string]string{
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256":       "ECDHE-ECDSA-AES128-GCM-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256":         "ECDHE-RSA-AES128-GCM-SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384":       "ECDHE-ECDSA-AES256-GCM-SHA384",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384":         "ECDHE-RSA-AES256-GCM-SHA384",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256":   "ECDHE-RSA-CHACHA20-POLY1305",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA":          "ECDHE-ECDSA-AES128-SHA",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA":            "ECDHE-RSA-AES128-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA":          "ECDHE-ECDSA-AES256-SHA",
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA":            "ECDHE-RSA-AES256-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256":       "ECDHE-ECDSA-AES128-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256":         "ECDHE-RSA-AES128-SHA256",
	"TLS_RSA_WITH_AES_128_GCM_SHA256":               "AES128-GCM-SHA256",
	"TLS_RSA_WITH_AES_256_GCM_SHA384":               "AES256-GCM-SHA384",
	"TLS_RSA_WITH_AES_128_CBC_SHA":                  "AES128-SHA",
	"TLS_RSA_WITH_AES_256_CBC_SHA":                  "AES256-SHA",
	"TLS_RSA_WITH_AES_128_CBC_SHA256":               "AES128-SHA256",
	"TLS_RSA_WITH_3DES_EDE_CBC_SHA":                 "DES-CBC3-SHA",
	"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA":           "ECDHE-RSA-DES-CBC3-SHA",
}

// suite is a TLS 1.2 suite with the OpenSSL aliases that select it.
type suite struct {
	id         uint16
	iana, name string
	tags       map[string]bool
}

var suites12 = func() []suite {
	var out []suite
	for _, list := range [][]*tls.CipherSuite{tls.CipherSuites(), tls.InsecureCipherSuites()} {
		for _, cs := range list {
			name, ok := openSSLNames[cs.Name]
			if !ok {
				continue // TLS 1.3 suites, RC4
			}
			out = append(out, suite{id: cs.ID, iana: cs.Name, name: name, tags: tagsOf(name)})
		}
	}
	return out
}()

// tagsOf derives OpenSSL's cipher-string aliases from a suite's name.
func tagsOf(name string) map[string]bool {
	t := map[string]bool{"ALL": true, "DEFAULT": true}
	parts := strings.Split(name, "-")
	has := func(p string) bool {
		for _, x := range parts {
			if x == p {
				return true
			}
		}
		return false
	}
	if parts[0] == "ECDHE" {
		for _, a := range []string{"ECDHE", "EECDH", "kECDHE", "kEECDH", "ECDH"} {
			t[a] = true
		}
	} else {
		t["kRSA"], t["RSA"] = true, true
	}
	if has("ECDSA") {
		t["aECDSA"], t["ECDSA"] = true, true
	} else {
		t["aRSA"], t["RSA"] = true, true
	}
	switch {
	case has("AES128"):
		t["AES"], t["AES128"] = true, true
	case has("AES256"):
		t["AES"], t["AES256"] = true, true
	}
	if has("GCM") {
		t["AESGCM"] = true
	}
	if has("CHACHA20") {
		t["CHACHA20"] = true
	}
	if has("DES") {
		t["3DES"], t["MEDIUM"] = true, true
	} else {
		t["HIGH"] = true
	}
	switch parts[len(parts)-1] {
	case "SHA":
		t["SHA1"], t["SHA"] = true, true
	case "SHA256", "SHA384":
		t[parts[len(parts)-1]] = true
	}
	return t
}

func (s *suite) matches(token string) bool {
	if token == s.name || token == s.iana {
		return true
	}
	for _, part := range strings.Split(token, "+") {
		if !s.tags[part] {
			return false
		}
	}
	return true
}

// parseCiphers reads an OpenSSL cipher list (SSL_CTX_set_cipher_list):
// names and aliases separated by ':', ',' or spaces, a '!' excluding for
// good, a '-' removing what is selected so far; '+' moves (ordering) and
// '@' directives are accepted and ignored (Go orders suites itself), and
// so are unknown names, as OpenSSL ignores them. ok is false when nothing
// is selected, OpenSSL's failure.
func parseCiphers(spec string) (ids []uint16, ok bool) {
	selected := make([]bool, len(suites12))
	banned := make([]bool, len(suites12))
	for _, tok := range strings.FieldsFunc(spec, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		op := byte(0)
		if tok[0] == '!' || tok[0] == '-' || tok[0] == '+' {
			op, tok = tok[0], tok[1:]
		}
		if op == '+' || tok == "" || tok[0] == '@' {
			continue
		}
		for i := range suites12 {
			if !suites12[i].matches(tok) {
				continue
			}
			switch op {
			case '!':
				banned[i], selected[i] = true, false
			case '-':
				selected[i] = false
			default:
				selected[i] = !banned[i]
			}
		}
	}
	for i, s := range suites12 {
		if selected[i] {
			ids = append(ids, s.id)
		}
	}
	return ids, len(ids) > 0
}

// goSuites13 are the TLS 1.3 suites Go negotiates (all of them, always).
var goSuites13 = []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}

// suites13 reads tls-ciphersuites (SSL_CTX_set_ciphersuites: names
// separated by ':', unknown ones skipped). all reports whether it names
// each suite Go negotiates; none whether it names none of them (OpenSSL
// then has no TLS 1.3 suite and does not negotiate TLS 1.3).
func suites13(spec string) (all, none bool) {
	named := map[string]bool{}
	for _, n := range strings.Split(spec, ":") {
		named[strings.TrimSpace(n)] = true
	}
	count := 0
	for _, s := range goSuites13 {
		if named[s] {
			count++
		}
	}
	return count == len(goSuites13), count == 0
}
