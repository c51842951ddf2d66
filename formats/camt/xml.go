package camt

// The element structs below name only what the reader uses; encoding/xml
// skips every other element. Tags carry no namespace, so they match the
// local names of every version. Names of people and free text are never
// decoded.

type xAmt struct {
	Value string `xml:",chardata"`
	Ccy   string `xml:"Ccy,attr"`
}

type xDate struct {
	Dt   string `xml:"Dt"`
	DtTm string `xml:"DtTm"`
}

// xStatus is Sts: text up to version 08, a Cd or Prtry choice from 09.
type xStatus struct {
	Text  string `xml:",chardata"`
	Cd    string `xml:"Cd"`
	Prtry string `xml:"Prtry"`
}

type xBkTxCd struct {
	Domn struct {
		Cd   string `xml:"Cd"`
		Fmly struct {
			Cd        string `xml:"Cd"`
			SubFmlyCd string `xml:"SubFmlyCd"`
		} `xml:"Fmly"`
	} `xml:"Domn"`
	Prtry struct {
		Cd string `xml:"Cd"`
	} `xml:"Prtry"`
}

// xCharge is one charge: a Chrgs element of version 02 or a Chrgs/Rcrd of
// later versions.
type xCharge struct {
	Amt         xAmt   `xml:"Amt"`
	CdtDbtInd   string `xml:"CdtDbtInd"`
	ChrgInclInd string `xml:"ChrgInclInd"`
}

type xCharges struct {
	xCharge
	Rcrd []xCharge `xml:"Rcrd"`
}

type xAcct struct {
	Id struct {
		IBAN string `xml:"IBAN"`
		Othr struct {
			Id   string `xml:"Id"`
			Issr string `xml:"Issr"`
		} `xml:"Othr"`
	} `xml:"Id"`
	Ccy  string `xml:"Ccy"`
	Svcr struct {
		FinInstnId struct {
			BIC   string `xml:"BIC"`
			BICFI string `xml:"BICFI"`
		} `xml:"FinInstnId"`
	} `xml:"Svcr"`
}

type xBal struct {
	Tp struct {
		CdOrPrtry struct {
			Cd    string `xml:"Cd"`
			Prtry string `xml:"Prtry"`
		} `xml:"CdOrPrtry"`
	} `xml:"Tp"`
	Amt       xAmt   `xml:"Amt"`
	CdtDbtInd string `xml:"CdtDbtInd"`
	Dt        xDate  `xml:"Dt"`
}

type xTx struct {
	Refs struct {
		AcctSvcrRef string `xml:"AcctSvcrRef"`
		PmtInfId    string `xml:"PmtInfId"`
		InstrId     string `xml:"InstrId"`
		EndToEndId  string `xml:"EndToEndId"`
		TxId        string `xml:"TxId"`
	} `xml:"Refs"`
	Amt       xAmt   `xml:"Amt"`
	CdtDbtInd string `xml:"CdtDbtInd"`
	AmtDtls   struct {
		InstdAmt struct {
			Amt xAmt `xml:"Amt"`
		} `xml:"InstdAmt"`
		TxAmt struct {
			Amt xAmt `xml:"Amt"`
		} `xml:"TxAmt"`
	} `xml:"AmtDtls"`
	BkTxCd xBkTxCd    `xml:"BkTxCd"`
	Chrgs  []xCharges `xml:"Chrgs"`
	RmtInf struct {
		Strd []struct {
			CdtrRefInf struct {
				Ref string `xml:"Ref"`
			} `xml:"CdtrRefInf"`
		} `xml:"Strd"`
	} `xml:"RmtInf"`
	RtrInf *struct{} `xml:"RtrInf"`
}

type xEntry struct {
	NtryRef     string     `xml:"NtryRef"`
	Amt         xAmt       `xml:"Amt"`
	CdtDbtInd   string     `xml:"CdtDbtInd"`
	RvslInd     string     `xml:"RvslInd"`
	Sts         *xStatus   `xml:"Sts"`
	BookgDt     xDate      `xml:"BookgDt"`
	ValDt       xDate      `xml:"ValDt"`
	AcctSvcrRef string     `xml:"AcctSvcrRef"`
	BkTxCd      xBkTxCd    `xml:"BkTxCd"`
	Chrgs       []xCharges `xml:"Chrgs"`
	NtryDtls    []struct {
		Btch   xBatch `xml:"Btch"`
		TxDtls []xTx  `xml:"TxDtls"`
	} `xml:"NtryDtls"`
}

type xBatch struct {
	MsgId    string `xml:"MsgId"`
	PmtInfId string `xml:"PmtInfId"`
	NbOfTxs  string `xml:"NbOfTxs"`
}
