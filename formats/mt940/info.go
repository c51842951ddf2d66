package mt940

import (
	"strings"

	"github.com/clearing-dev/clearing/formats"
)

// info is what the reader takes from a :86: field: matching references and
// the German business transaction code. Names, accounts and free text are
// never kept.
type info struct {
	eref, kref, remi string
	gvc              string
}

// swiftCodes are the codes of the SWIFT-style structured :86: ("/EREF/...
// /REMI/..."), as Dutch and Belgian banks write it. A value runs to the
// next "//" or the next "/CODE/".
var swiftCodes = []string{"EREF", "PREF", "KREF", "MARF", "REMI", "CNTP", "ORDP", "BENM", "CSID", "RTRN", "TRCD", "ISDT",
	"NAME", "ADDR", "BIC", "ID", "USTD", "STRD", "CUR", "SUM", "IBAN", "SVCL", "PURP", "ULTB", "ULTD", "FX", "EXCH", "CHGS", "ACCW", "BUSP", "OCMT"}

// sepaTags are the SEPA keywords inside German ?20-?29 purpose lines.
var sepaTags = []string{"EREF+", "KREF+", "MREF+", "CRED+", "DEBT+", "SVWZ+", "ABWA+", "ABWE+", "IBAN+", "BIC+", "COAM+", "OAMT+"}

// parseInfo reads the two structured forms of :86:. Unstructured text
// yields nothing.
func parseInfo(v string) info {
	var in info
	switch {
	case strings.HasPrefix(v, "/"):
		in.eref = swiftValue(v, "EREF")
		in.kref = swiftValue(v, "KREF")
		if in.kref == "" {
			in.kref = swiftValue(v, "PREF")
		}
		if r := swiftValue(v, "REMI"); strings.HasPrefix(r, "STRD/CUR/") {
			in.remi = strings.TrimSuffix(strings.TrimPrefix(r, "STRD/CUR/"), "/")
		}
	case len(v) > 3 && isDigit(v[0]) && isDigit(v[1]) && isDigit(v[2]) && (v[3] == '?' || len(v) == 3):
		in.gvc = v[:3]
		var purpose strings.Builder
		for _, part := range strings.Split(v[3:], "?") {
			if len(part) >= 2 && part[0] == '2' && isDigit(part[1]) {
				purpose.WriteString(part[2:])
			}
		}
		p := purpose.String()
		in.eref = sepaValue(p, "EREF+")
		in.kref = sepaValue(p, "KREF+")
	}
	return in
}

// swiftValue returns the value of "/CODE/" in v.
func swiftValue(v, code string) string {
	i := strings.Index(v, "/"+code+"/")
	if i < 0 {
		return ""
	}
	rest := v[i+len(code)+2:]
	end := len(rest)
	if j := strings.Index(rest, "//"); j >= 0 && code != "REMI" {
		end = j
	}
	for _, c := range swiftCodes {
		if code == "REMI" && (c == "USTD" || c == "STRD" || c == "CUR") {
			continue // REMI's own sub-codes
		}
		if j := strings.Index(rest, "/"+c+"/"); j >= 0 && j < end && c != code {
			end = j
		}
	}
	return strings.TrimSpace(strings.TrimRight(rest[:end], "/"))
}

// sepaValue returns the value of a SEPA keyword in German purpose text.
func sepaValue(p, tag string) string {
	i := strings.Index(p, tag)
	if i < 0 {
		return ""
	}
	rest := p[i+len(tag):]
	end := len(rest)
	for _, t := range sepaTags {
		if j := strings.Index(rest, t); j >= 0 && j < end {
			end = j
		}
	}
	return strings.TrimSpace(rest[:end])
}

// typeLineTypes maps the three characters of a :61: transaction type
// ("CHG" of "NCHG") to line types. As for bai2 and camt, the list is
// narrow: anything else is a Payment, which can only surface as a break.
var typeLineTypes = map[string]formats.LineType{
	"CHG": formats.Fee,        // charges and other expenses
	"COM": formats.Fee,        // commission
	"RTI": formats.ReturnLine, // returned item
}

// lineType gives a statement line's type: a reversal mark (RC, RD) is a
// return line; otherwise the transaction type decides.
func lineType(l *line61, over map[string]formats.LineType) formats.LineType {
	if l.reversal {
		return formats.ReturnLine
	}
	code := ""
	if len(l.txType) == 4 {
		code = l.txType[1:]
	}
	if lt, ok := over[code]; ok {
		return lt
	}
	if lt, ok := typeLineTypes[code]; ok {
		return lt
	}
	return formats.Payment
}
