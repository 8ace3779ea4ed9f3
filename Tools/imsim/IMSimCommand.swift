import ArgumentParser
import IMSim

@main
struct IMSimCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imsim",
        abstract: "Deterministic simulation and replay kernel for instant messaging.",
        discussion: """
            One thread, one seed, virtual time: IMSim runs the real wire codec, the real SQLite \
            message store and the real client and server state machines of an IM system under a \
            simulated network and clocks, records compressed traces and replays production captures.
            """,
        version: "imsim \(IMSimVersion.string) (\(IMSimVersion.buildConfiguration))",
        subcommands: [
            BenchCommand.self,
            ClientCommand.self,
            DecodeCommand.self,
            EncodeCommand.self,
            FuzzCommand.self,
            ImportCommand.self,
            LoadgenCommand.self,
            ProxyCommand.self,
            RegressCommand.self,
            ReplayCommand.self,
            RunCommand.self,
            SeedsCommand.self,
            ServeCommand.self,
            ShrinkCommand.self,
            SweepCommand.self,
            SweepWorkerCommand.self,
            StoreCommand.self,
            TokenCommand.self,
            TraceCommand.self,
        ]
    )
}
