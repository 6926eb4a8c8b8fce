// Package runresult holds the records a study's run hands to its printer
// (internal/ui): each command's result as plain data, the --json document
// most of them are (doctor's, gate's, verify's and compare's, sweep's rows,
// import's files). internal/studyrun builds them; ui prints them. They
// live apart from studyrun so that the printers depend on no statistics
// routine: runresult imports neither model, search nor studyrun
// (TestPrintersDependOnNoStatistics in internal/ui), and decides nothing.
package runresult
