import IMSim

/// Wires the replay module's capture recorder into the runtime client.
enum RuntimeCapture {
    static func factory(path: String, source: String) -> ClientCaptureFactory {
        { _, _, _ in throw RuntimeError.io(path: path, message: "capture recording is not wired yet") }
    }
}
