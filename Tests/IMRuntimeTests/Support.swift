import IMClient
import IMRuntime
import IMServer
import IMWire
import NIOCore
import NIOPosix
import Testing

/// Polls `condition` every 20 ms until it holds or `seconds` pass (generous: CI is a loaded
/// 2-core machine). Returns whether it held.
func eventually(_ seconds: Double, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// A server on loopback port 0 with the given users.
func startServer(_ group: EventLoopGroup, users: [String], configure: (inout ServerConfig) -> Void = { _ in }) async throws -> RuntimeServer {
    var o = RuntimeServerOptions()
    o.users = users
    configure(&o.config)
    return try await RuntimeServer.start(o, group: group).get()
}

func clientOptions(_ user: String, port: Int, device: String? = nil) throws -> RuntimeClientOptions {
    RuntimeClientOptions(server: try SocketAddress(ipAddress: "127.0.0.1", port: port),
                         identity: DeviceIdentity(userId: user, deviceId: device ?? "\(user)-phone", platform: .mobile),
                         token: RuntimeServerOptions.token(for: user))
}

func tempPath(_ name: String) -> String {
    "/tmp/imsim-runtime-test-\(getpid())-\(UInt64.random(in: 0...UInt64.max))-\(name)"
}
