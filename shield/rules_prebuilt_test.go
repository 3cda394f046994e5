package shield_test

import (
	"testing"

	"github.com/opx-dev/opx/shield"
)

// Rules 12 (k27g): prebuilt binaries linked or shipped by a build file
// (Gradle, CMake, Bazel, MSBuild, node-gyp); libraries named without a
// file, and binaries the file already named, pass.
func TestRules12_PrebuiltLinked(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	const pre = "escalate supply-chain:prebuilt"
	runRuleCases(t, s, []ruleCase{
		{"gradle jar file", ed("android/app/build.gradle.kts", "dependencies {", "dependencies {\n    implementation(files(\"libs/fastpay-sdk.jar\"))"), pre},
		{"cmake imported lib", ed("native/CMakeLists.txt", "target_link_libraries(engine PRIVATE fmt::fmt)", "target_link_libraries(engine PRIVATE fmt::fmt ${CMAKE_SOURCE_DIR}/third_party/boost/libnetboost.a)"), pre},
		{"bazel cc_import", ed("third_party/BUILD.bazel", "package(default_visibility = [\"//visibility:public\"])", "package(default_visibility = [\"//visibility:public\"])\ncc_import(name = \"codec\", shared_library = \"lib/libcodec.so\")"), pre},
		{"msbuild reference", ed("src/App/App.csproj", "  <ItemGroup>", "  <ItemGroup>\n    <Reference Include=\"Vendor\"><HintPath>..\\lib\\Vendor.Crypto.dll</HintPath></Reference>"), pre},

		{"benign system library", ed("native/CMakeLists.txt", "target_link_libraries(engine PRIVATE fmt::fmt)", "target_link_libraries(engine PRIVATE fmt::fmt pthread z)"), none},
		{"benign package coordinate", ed("android/app/build.gradle.kts", "dependencies {", "dependencies {\n    implementation(\"com.squareup.okhttp3:okhttp:4.12.0\")"), none},
		{"benign binary already named", ed("native/CMakeLists.txt", "set(CODEC lib/libcodec.so)\ntarget_link_libraries(engine PRIVATE fmt::fmt)", "set(CODEC lib/libcodec.so)\ntarget_link_libraries(engine PRIVATE fmt::fmt ${CMAKE_SOURCE_DIR}/lib/libcodec.so)"), none},
	})
}
