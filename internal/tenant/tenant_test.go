package tenant

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateAcceptsOnlyThePattern(t *testing.T) {
	for _, id := range []string{"default", "a", "0", "acme-eu.prod_2", "demo-20261201-085500", strings.Repeat("x", 63)} {
		if err := Validate(id); err != nil {
			t.Errorf("Validate(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range []string{"", "Default", "default ", " default", "a:b", "-a", ".a", "_a", "a b", "a/b",
		"default\n", "défault", strings.Repeat("x", 64), "a\x00"} {
		err := Validate(id)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%q) = %v, want ErrInvalid", id, err)
		}
	}
}

func TestInvalidIDIsQuotedAndCut(t *testing.T) {
	err := Validate(strings.Repeat("X", 10_000))
	if err == nil || len(err.Error()) > 300 {
		t.Fatalf("the error quotes a long id whole: %d bytes", len(err.Error()))
	}
	if !strings.Contains(Validate("a\nb").Error(), `"a\nb"`) {
		t.Fatalf("a control character is not escaped: %v", Validate("a\nb"))
	}
}
