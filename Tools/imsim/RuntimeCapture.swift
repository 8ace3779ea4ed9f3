import IMSim

/// The runtime client's capture: IMReplay's recorder writing a file.
enum RuntimeCapture {
    static func factory(path: String, source: String) -> ClientCaptureFactory {
        RecorderCaptureSink.file(path, source: source)
    }
}
