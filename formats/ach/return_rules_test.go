package ach

import (
	"fmt"
	"strings"
	"testing"
)

// The table of what each return requires, pinned: a change to a rule must
// change this test too.
func TestReturnRulesArePinned(t *testing.T) {
	want := map[string]string{
		"R01": "represent=2 stop=false unauthorized=false 2 banking days",
		"R02": "represent=0 stop=true unauthorized=false 2 banking days",
		"R03": "represent=0 stop=true unauthorized=false 2 banking days",
		"R04": "represent=0 stop=true unauthorized=false 2 banking days",
		"R05": "represent=0 stop=true unauthorized=true 60 calendar days",
		"R06": "represent=0 stop=false unauthorized=false 2 banking days",
		"R07": "represent=0 stop=true unauthorized=true 60 calendar days",
		"R08": "represent=0 stop=true unauthorized=false 2 banking days",
		"R09": "represent=2 stop=false unauthorized=false 2 banking days",
		"R10": "represent=0 stop=true unauthorized=true 60 calendar days",
		"R11": "represent=0 stop=false unauthorized=true 60 calendar days",
		"R16": "represent=0 stop=true unauthorized=false 2 banking days",
		"R20": "represent=0 stop=true unauthorized=false 2 banking days",
		"R24": "represent=0 stop=false unauthorized=false 2 banking days",
		"R29": "represent=0 stop=true unauthorized=true 2 banking days",
		"R51": "represent=0 stop=false unauthorized=true 60 calendar days",
		"R61": "represent=0 stop=false unauthorized=false 5 banking days",
		"R69": "represent=0 stop=false unauthorized=false 5 banking days",
		"R77": "represent=0 stop=false unauthorized=false 2 banking days",
		"R85": "represent=0 stop=false unauthorized=false 2 banking days",
	}
	for code, w := range want {
		r, ok := ReturnRuleOf(code)
		if !ok {
			t.Errorf("%s: unknown", code)
			continue
		}
		if got := fmt.Sprintf("represent=%d stop=%v unauthorized=%v %s", r.Represent, r.StopDebits, r.Unauthorized, r.TimeFrame); got != w || r.Reason == "" {
			t.Errorf("%s: %s (%q), want %s", code, got, r.Reason, w)
		}
	}
	// Every code of the table is one moov-io/ach knows: a typo in a code
	// would silently give its entry the default rule.
	for code := range returnRules {
		if _, ok := ReturnRuleOf(code); !ok {
			t.Errorf("the table names %s, which is no return code", code)
		}
	}
	for _, bad := range []string{"R00", "R99", "X01", ""} {
		if _, ok := ReturnRuleOf(bad); ok {
			t.Errorf("%q is taken for a return code", bad)
		}
	}
	for code, field := range map[string]string{"C01": "account", "C02": "routing", "C05": "transaction code", "C14": "IAT"} {
		c, ok := ChangeRuleOf(code)
		if !ok || !strings.Contains(strings.ToLower(c.Reason), strings.ToLower(field)) {
			t.Errorf("%s: %+v, want a reason naming %s", code, c, field)
		}
	}
	for detail, code := range map[string]string{"return R01": "R01", "contested dishonored return R72": "R72", "NOC C03": "C03", "PPD 22 credit": ""} {
		if got := CodeOf(detail); got != code {
			t.Errorf("CodeOf(%q) = %q, want %q", detail, got, code)
		}
	}
}
