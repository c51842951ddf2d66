package settings

import (
	"errors"
	"testing"
)

func TestFourEyesKeysAndThresholds(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		wantKey    string
		wantMinor  int64
		wantErr    error
	}{
		{key: "corrections.four_eyes_above.USD", value: "1000", wantKey: "corrections.four_eyes_above.USD", wantMinor: 100_000},
		{key: "corrections.four_eyes_above.usd", value: "1000.5", wantKey: "corrections.four_eyes_above.USD", wantMinor: 100_050},
		{key: "corrections.four_eyes_above.840", value: "0", wantKey: "corrections.four_eyes_above.USD", wantMinor: 0},
		{key: "corrections.four_eyes_above.JPY", value: "1000", wantKey: "corrections.four_eyes_above.JPY", wantMinor: 1000},
		{key: "corrections.four_eyes_above.BHD", value: "1.005", wantKey: "corrections.four_eyes_above.BHD", wantMinor: 1005},
		{key: "corrections.four_eyes_above.JPY", value: "1000.5", wantErr: ErrBadValue},
		{key: "corrections.four_eyes_above.USD", value: "-1", wantErr: ErrBadValue},
		{key: "corrections.four_eyes_above.USD", value: "+1", wantErr: ErrBadValue},
		{key: "corrections.four_eyes_above.USD", value: "1,000", wantErr: ErrBadValue},
		{key: "corrections.four_eyes_above.USD", value: "", wantErr: ErrBadValue},
		{key: "corrections.four_eyes_above.USD", value: "10000000000000000", wantErr: ErrBadValue},
		{key: "corrections.four_eyes_above.XYZ", value: "1", wantErr: ErrUnknownKey},
		{key: "corrections.four_eyes_above.", value: "1", wantErr: ErrUnknownKey},
		{key: "corrections.four_eyes_above_minor", value: "100000", wantErr: ErrUnknownKey},
		{key: "corrections.other", value: "1", wantErr: ErrUnknownKey},
	} {
		key, c, err := parseKey(tc.key)
		var minor int64
		if err == nil {
			minor, err = parseThreshold(tc.value, c)
		}
		if !errors.Is(err, tc.wantErr) || (err == nil && (key != tc.wantKey || minor != tc.wantMinor)) {
			t.Errorf("%s = %q: key %q, %d minor units, %v; want %q, %d, %v", tc.key, tc.value, key, minor, err,
				tc.wantKey, tc.wantMinor, tc.wantErr)
		}
	}
}
