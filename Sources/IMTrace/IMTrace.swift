// The recorder of a simulated run and the views that need the simulator (the ledger, diffs).
// The container, records, reader and the other views are IMTraceFormat, which links no simulator;
// re-exported so `import IMTrace` gives the whole trace API.
@_exported import IMTraceFormat
