// The umbrella module: `import IMSim` gives a user's test suite the whole kernel.
@_exported import SimKernel
@_exported import IMWire
@_exported import IMStore
@_exported import IMClient
@_exported import IMServer
@_exported import IMWorld
@_exported import IMTrace
@_exported import IMCapture
@_exported import IMReplay
@_exported import IMRuntime
