/// The oracles written for survivors of `imsim bench mutants` (Docs/mutants.md), registered with
/// the suite from one place so that adding one touches OracleSuite.swift no more.
enum MutationOracles {
    static let names: [String] = [RecallWindowOracle.oracleName, ApiAnswerOracle.oracleName, ConnectOutcomeOracle.oracleName,
                                  KVReadOracle.oracleName, SensitiveWordOracle.oracleName,
                                  RemoteHistoryOracle.oracleName, OneRoomOracle.oracleName]

    static func make(suite: OracleSuite) -> [any Oracle] {
        [RecallWindowOracle(suite: suite), ApiAnswerOracle(suite: suite), ConnectOutcomeOracle(suite: suite),
         KVReadOracle(suite: suite), SensitiveWordOracle(suite: suite),
         RemoteHistoryOracle(suite: suite), OneRoomOracle(suite: suite)]
    }
}
