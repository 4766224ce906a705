package dashboard

import "testing"

// The snippet's base URL comes from the request's Host header: whatever
// it holds stays one JavaScript string.
func TestJSStringEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8080":   `'http://localhost:8080'`,
		"http://a'b</script>":     `'http://a\'b\u003C/script\u003E'`,
		`http://x\y"z`:            `'http://x\\y\"z'`,
		"http://sk_c_1a2b3c4d5e…": `'http://sk_c_1a2b3c4d5e…'`,
	} {
		if got := jsString(in); got != want {
			t.Errorf("jsString(%q)=%s, want %s", in, got, want)
		}
	}
}
