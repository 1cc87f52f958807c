// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "GraphStore",
    // The floor is `Synchronization` (`Mutex`, `Atomic`), which the library uses: macOS 15,
    // iOS 18, tvOS 18, watchOS 11, visionOS 2.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "GraphStore", targets: ["GraphStore"]),
        .library(name: "GraphStoreSQLite", targets: ["GraphStoreSQLite"]),
        .executable(name: "graphstore", targets: ["graphstore"]),
        .executable(name: "dashboard", targets: ["dashboard"]),
        .executable(name: "notes", targets: ["notes"]),
        .executable(name: "news-import", targets: ["news-import"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // zlib, from the system (`libz-dev` / `zlib1g-dev`).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // The JSON and binary-plist parsers, decoders and encoders: internal to the package.
        .target(name: "GraphStoreCoding"),
        .target(
            name: "GraphStore",
            dependencies: [
                "CZlib",
                "GraphStoreCoding",
                .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The one SQLite call Swift cannot make (a variadic function), for GraphStoreSQLite.
        .target(
            name: "CGraphStoreSQLite",
            linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(
            name: "GraphStoreSQLite",
            dependencies: [
                "GraphStore",
                "GraphStoreCoding",
                "CGraphStoreSQLite",
                "CZlib",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "ExampleModel",
            dependencies: ["GraphStore"]),
        // The two process calls the tests' `ChildProcess` needs that Swift's C library import
        // leaves out (`pipe2`, the spawn action closing every other descriptor).
        .target(
            name: "CGraphStoreTestSupport",
            path: "Tests/CGraphStoreTestSupport"),
        .target(
            name: "GraphStoreTestSupport",
            dependencies: ["GraphStore", "GraphStoreSQLite", "ExampleModel", "CZlib", "CGraphStoreTestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/GraphStoreTestSupport"),
        .target(
            name: "DashboardCore",
            dependencies: ["GraphStore", "ExampleModel"],
            path: "Examples/Dashboard/DashboardCore"),
        .executableTarget(
            name: "dashboard",
            dependencies: ["DashboardCore", "ExampleModel", "GraphStore", "GraphStoreSQLite", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/Dashboard/dashboard"),
        .target(
            name: "NotesCore",
            dependencies: ["GraphStore", "ExampleModel"],
            path: "Examples/Notes/NotesCore"),
        .executableTarget(
            name: "notes",
            dependencies: ["NotesCore", "ExampleModel", "GraphStore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/Notes/notes"),
        .target(
            name: "NewsCore",
            dependencies: ["GraphStore"],
            path: "Examples/NewsImport/NewsCore"),
        .executableTarget(
            name: "news-import",
            dependencies: ["NewsCore", "GraphStore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/NewsImport/news-import"),
        .executableTarget(
            name: "graphstore",
            dependencies: ["GraphStore", "GraphStoreSQLite", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(
            name: "graphstore-bench",
            dependencies: ["GraphStore", "GraphStoreSQLite", "ExampleModel", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Benchmarks/graphstore-bench"),
        // The two model versions of the migration kill trials: the crash helper writes and
        // migrates stores of them, the tests check what a kill left.
        .target(
            name: "KillTrialModel",
            dependencies: ["GraphStore"],
            path: "Tests/KillTrialModel"),
        .executableTarget(
            name: "graphstore-crash-helper",
            dependencies: ["GraphStore", "GraphStoreSQLite", "ExampleModel", "KillTrialModel"],
            path: "Tests/CrashHelper"),
        .testTarget(
            name: "GraphStoreTests",
            dependencies: [
                "GraphStore",
                "GraphStoreCoding",
                "GraphStoreSQLite",
                "ExampleModel",
                "GraphStoreTestSupport",
                "KillTrialModel",
                "graphstore-crash-helper",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "GraphStoreSQLiteTests",
            dependencies: [
                "GraphStoreSQLite",
                "GraphStore",
                "ExampleModel",
                "GraphStoreTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["Fixtures"]),
        // Its own target: the generated `Note`, `Tag`… would shadow the example model's.
        .testTarget(
            name: "CoreDataGenerateTests",
            dependencies: ["GraphStoreSQLite", "GraphStore", "GraphStoreTestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "DashboardTests",
            dependencies: ["DashboardCore", "ExampleModel", "GraphStore", "GraphStoreTestSupport"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "NotesTests",
            dependencies: ["NotesCore", "ExampleModel", "GraphStore", "GraphStoreSQLite", "GraphStoreTestSupport"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "NewsImportTests",
            dependencies: ["NewsCore", "GraphStore", "GraphStoreTestSupport"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "graphstoreTests",
            dependencies: ["graphstore", "GraphStore", "GraphStoreSQLite", "ExampleModel", "GraphStoreTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
