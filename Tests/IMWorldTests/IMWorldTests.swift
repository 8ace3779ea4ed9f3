import Testing
@testable import IMWorld
