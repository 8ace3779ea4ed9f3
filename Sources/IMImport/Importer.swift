import IMCapture
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Entry points of `imsim import`: read, build, write atomically (the capture file appears only
/// when the import succeeded; `OUT.partial` is removed on failure).
public enum Importer {
    public static func write(_ traffic: ObservedTraffic, overrides: IdentityOverrides, to path: String) throws(ImportError) -> ImportReport {
        let sink: CaptureFileSink
        do { sink = try CaptureFileSink(path: path) } catch { throw ImportError(.output, "\(path): \(error)") }
        let builder: CaptureBuilder
        do { builder = try CaptureBuilder(traffic: traffic, overrides: overrides, sink: sink) } catch {
            sink.abandon()
            throw error
        }
        return try builder.run()
    }

    /// Builds the capture in memory (tests, the fuzzer).
    public static func build(_ traffic: ObservedTraffic, overrides: IdentityOverrides) throws(ImportError) -> (capture: [UInt8], report: ImportReport) {
        let sink = CaptureMemorySink()
        let builder = try CaptureBuilder(traffic: traffic, overrides: overrides, sink: sink)
        let report = try builder.run()
        return (sink.bytes, report)
    }
}
