package ipm

import "strings"

// LifecycleKey returns the key under which the card lifecycle of s is
// posted: the first presentment's, ipm:<ARN>:1240:200, which its
// chargebacks, second presentments and reversals are derived from. s is an
// ARN (23 digits with its check digit) or the own key of any step,
// ipm:<ARN>:<MTI>:<DE24>. It reports false for anything else, fee
// collections included (they are no lifecycle).
func LifecycleKey(s string) (string, bool) {
	arn := s
	if rest, ok := strings.CutPrefix(s, keyPrefix); ok {
		parts := strings.Split(rest, ":")
		if len(parts) != 3 || (parts[1] != "1240" && parts[1] != "1442") {
			return "", false
		}
		arn = parts[0]
	}
	if len(arn) != 23 || !allDigits(arn) || luhnDigit(arn[:22]) != arn[22] {
		return "", false
	}
	return keyPrefix + arn + ":1240:200", true
}
