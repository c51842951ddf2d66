package ach

import (
	"errors"
	"fmt"
	"strings"

	moov "github.com/moov-io/ach"

	"github.com/clearing-dev/clearing/internal/pii"
)

// shownFields are the moov-io/ach field names whose values are codes,
// routing numbers, dates, counts or totals. Their values may appear in an
// error message as they are; every other field's value is withheld, because
// moov-io/ach puts the offending value into its messages and a field such as
// IndividualName, DFIAccountNumber or an IAT address would carry personal
// data into logs. The list is an allowlist so that a field added by a future
// moov-io/ach release is withheld until someone decides otherwise.
var shownFields = map[string]bool{
	"ACHOperatorRoutingNumber": true, "AddendaCount": true, "AddendaRecordIndicator": true,
	"AddendaRecords": true, "Amount": true, "BatchCount": true, "BatchNumber": true,
	"BlockCount": true, "CardTransactionType": true, "Category": true,
	"ChangeCode": true, "CheckDigit": true, "CompanyIdentification": true,
	"ContestedReturnCode": true, "DishonoredReturnReasonCode": true,
	"EffectiveEntryDate": true, "EntryAddendaCount": true, "EntryDetailSequenceNumber": true,
	"EntryHash": true, "FileCreationDate": true, "FileCreationTime": true,
	"FileIDModifier": true, "ForeignExchangeIndicator": true,
	"ForeignExchangeReferenceIndicator": true, "FormatCode": true, "IATIndicator": true,
	"ISODestinationCountryCode": true, "ISODestinationCurrencyCode": true,
	"ISOOriginatingCurrencyCode": true, "ImmediateDestination": true,
	"ImmediateOrigin": true, "JulianDay": true, "ODFIIdentification": true,
	"ODFIIdentificationField": true, "OriginalDFI": true, "OriginalEntryTraceNumber": true,
	"OriginalReceivingDFIIdentification": true, "OriginalTrace": true,
	"OriginatorIdentification": true, "OriginatorStatusCode": true,
	"RDFIIdentification": true, "RefusedChangeCode": true, "ReturnCode": true,
	"ReturnReasonCode": true, "SequenceNumber": true, "ServiceClassCode": true,
	"SettlementDate": true, "StandardEntryClassCode": true,
	"TotalCreditEntryDollarAmount": true, "TotalCreditEntryDollarAmountInFile": true,
	"TotalDebitEntryDollarAmount": true, "TotalDebitEntryDollarAmountInFile": true,
	"TraceNumber": true, "TransactionCode": true, "TransactionTypeCode": true,
	"TypeCode": true, "blockingFactor": true, "recordSize": true,
}

// maskedFields hold account numbers: a message shows them masked to their
// last four characters, enough for an operator to find the entry.
var maskedFields = map[string]bool{
	"DFIAccountNumber": true, "CorrectedData": true,
}

// describe turns an error from a moov-io/ach Validate method into the name
// of the field at fault and a message that carries no personal data.
func describe(err error) (field, msg string) {
	var be *moov.BatchError
	var fe *moov.FieldError
	switch {
	case errors.As(err, &be):
		if errors.As(be.Err, &fe) {
			return describe(fe)
		}
		return be.FieldName, render(be.FieldName, be.FieldValue, be.Err)
	case errors.As(err, &fe):
		return fe.FieldName, render(fe.FieldName, fe.Value, fe.Err)
	}
	return "", rootCause(err)
}

// render writes "<field> <value> <cause>" with the value shown, masked or
// withheld according to the field. A withheld field's cause is cut down to
// the sentinel it wraps, because moov-io/ach appends the offending character
// to some causes ("has non alphanumeric characters: ¿").
func render(field string, value any, cause error) string {
	if cause == nil {
		cause = errors.New("is invalid")
	}
	switch {
	case shownFields[field] && value != nil:
		return fmt.Sprintf("%s %v %s", field, value, cause)
	case shownFields[field]:
		return fmt.Sprintf("%s %s", field, cause)
	case maskedFields[field] && value != nil:
		return fmt.Sprintf("%s %s %s", field, pii.Mask(fmt.Sprint(value)), rootCause(cause))
	}
	return fmt.Sprintf("%s %s", field, rootCause(cause))
}

// rootCause returns the message of the innermost error that err wraps.
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// scrub replaces every occurrence of a secret in msg. It is the second line
// of defence behind describe, for error types that describe does not know.
// Secrets shorter than four characters are left alone: they would match
// ordinary words of the message.
func scrub(msg string, secrets ...string) string {
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "[withheld]")
		}
	}
	return msg
}
