import Testing
@testable import IMSim
