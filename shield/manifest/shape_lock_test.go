package manifest

import "testing"

// TestDiffShape_LocksLoosened (rules 11): pins, locks, audits and source
// mappings loosened in build files of stacks other than the eighth
// holdout's (Gradle in a Spring service, Maven, MSBuild props, composer
// in a Symfony app, pub for Flutter); version bumps pass.
func TestDiffShape_LocksLoosened(t *testing.T) {
	cases := []struct{ name, path, before, after, want string }{
		{"gradle dynamic version", "services/api/build.gradle", "dependencies {\n    implementation 'org.springframework.boot:spring-boot-starter-web:3.2.5'\n}\n", "dependencies {\n    implementation 'org.springframework.boot:spring-boot-starter-web:3.+'\n}\n", KindSource},
		{"gradle latest release", "services/api/build.gradle.kts", "dependencies {\n    implementation(\"io.ktor:ktor-server-core:2.3.9\")\n}\n", "dependencies {\n    implementation(\"io.ktor:ktor-server-core:latest.release\")\n}\n", KindSource},
		{"sbt dynamic version (rules 28)", "build.sbt", "libraryDependencies += \"com.github.pureconfig\" %% \"pureconfig\" % \"0.17.7\"\n", "libraryDependencies += \"com.github.pureconfig\" %% \"pureconfig\" % \"0.17.+\"\n", KindSource},
		{"sbt latest release", "build.sbt", "libraryDependencies += \"org.typelevel\" %% \"cats-core\" % \"2.12.0\"\n", "libraryDependencies += \"org.typelevel\" %% \"cats-core\" % \"latest.release\"\n", KindSource},
		{"sbt version bumped", "build.sbt", "libraryDependencies += \"org.typelevel\" %% \"cats-core\" % \"2.12.0\"\n", "libraryDependencies += \"org.typelevel\" %% \"cats-core\" % \"2.13.0\"\n", ""},
		{"flutter pub any", "app/pubspec.yaml", "dependencies:\n  http: ^1.2.0\n", "dependencies:\n  http: any\n", KindSource},
		{"msbuild audit off", "Directory.Build.props", "<Project>\n  <PropertyGroup>\n    <NuGetAudit>true</NuGetAudit>\n  </PropertyGroup>\n</Project>\n", "<Project>\n  <PropertyGroup>\n    <NuGetAudit>false</NuGetAudit>\n  </PropertyGroup>\n</Project>\n", KindChecksum},
		{"msbuild locked mode off", "src/Api/Api.csproj", "<PropertyGroup>\n  <RestoreLockedMode>true</RestoreLockedMode>\n</PropertyGroup>\n", "<PropertyGroup>\n  <RestoreLockedMode>false</RestoreLockedMode>\n</PropertyGroup>\n", KindChecksum},
		{"nuget signature accept", "nuget.config", "<config>\n  <add key=\"signatureValidationMode\" value=\"require\" />\n</config>\n", "<config>\n  <add key=\"signatureValidationMode\" value=\"accept\" />\n</config>\n", KindChecksum},
		{"nuget mapping widened", "nuget.config", "<packageSourceMapping>\n  <packageSource key=\"internal\">\n    <package pattern=\"Acme.*\" />\n  </packageSource>\n</packageSourceMapping>\n", "<packageSourceMapping>\n  <packageSource key=\"internal\">\n    <package pattern=\"Acme.*\" />\n    <package pattern=\"*\" />\n  </packageSource>\n</packageSourceMapping>\n", KindSource},
		{"nuget packages mapped to a new source", "src/nuget.config", "<packageSourceMapping>\n  <packageSource key=\"nuget.org\">\n    <package pattern=\"*\" />\n  </packageSource>\n</packageSourceMapping>\n", "<packageSourceMapping>\n  <packageSource key=\"nuget.org\">\n    <package pattern=\"Microsoft.*\" />\n  </packageSource>\n  <packageSource key=\"quick-feed\">\n    <package pattern=\"*\" />\n  </packageSource>\n</packageSourceMapping>\n", KindSource},
		{"nuget mapping to a named feed", "src/nuget.config", "<packageSources>\n  <add key=\"internal\" value=\"https://pkgs.dev.azure.com/acme/_packaging/internal/nuget/v3/index.json\" />\n</packageSources>\n<packageSourceMapping>\n</packageSourceMapping>\n", "<packageSources>\n  <add key=\"internal\" value=\"https://pkgs.dev.azure.com/acme/_packaging/internal/nuget/v3/index.json\" />\n</packageSources>\n<packageSourceMapping>\n  <packageSource key=\"internal\">\n    <package pattern=\"Acme.*\" />\n  </packageSource>\n</packageSourceMapping>\n", ""},
		{"symfony composer dev stability", "composer.json", "{\n    \"minimum-stability\": \"stable\",\n    \"require\": {\"symfony/console\": \"^7.0\"}\n}\n", "{\n    \"minimum-stability\": \"dev\",\n    \"require\": {\"symfony/console\": \"^7.0\"}\n}\n", KindSource},
		{"gradle project repos preferred", "settings.gradle.kts", "dependencyResolutionManagement {\n    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)\n}\n", "dependencyResolutionManagement {\n    repositoriesMode.set(RepositoriesMode.PREFER_PROJECT)\n}\n", KindSource},
		{"msbuild hint path outside", "src/Api/Api.csproj", "<Reference Include=\"Acme.Crypto\">\n  <HintPath>..\\lib\\Acme.Crypto.dll</HintPath>\n</Reference>\n", "<Reference Include=\"Acme.Crypto\">\n  <HintPath>..\\..\\..\\..\\tmp\\Acme.Crypto.dll</HintPath>\n</Reference>\n", KindSource},

		{"gradle version bumped", "services/api/build.gradle", "dependencies {\n    implementation 'org.springframework.boot:spring-boot-starter-web:3.2.5'\n}\n", "dependencies {\n    implementation 'org.springframework.boot:spring-boot-starter-web:3.3.0'\n}\n", ""},
		{"msbuild audit on", "Directory.Build.props", "<Project>\n  <PropertyGroup>\n    <NuGetAudit>false</NuGetAudit>\n  </PropertyGroup>\n</Project>\n", "<Project>\n  <PropertyGroup>\n    <NuGetAudit>true</NuGetAudit>\n  </PropertyGroup>\n</Project>\n", ""},
		{"nuget mapping narrowed", "nuget.config", "<packageSourceMapping>\n  <packageSource key=\"internal\">\n    <package pattern=\"Acme.*\" />\n  </packageSource>\n</packageSourceMapping>\n", "<packageSourceMapping>\n  <packageSource key=\"internal\">\n    <package pattern=\"Acme.*\" />\n    <package pattern=\"Acme.Tools.*\" />\n  </packageSource>\n</packageSourceMapping>\n", ""},
		{"composer stable kept", "composer.json", "{\n    \"minimum-stability\": \"stable\",\n    \"require\": {\"symfony/console\": \"^7.0\"}\n}\n", "{\n    \"minimum-stability\": \"stable\",\n    \"require\": {\"symfony/console\": \"^7.1\"}\n}\n", ""},
		{"msbuild hint path in tree", "src/Api/Api.csproj", "<Reference Include=\"Acme.Crypto\">\n  <HintPath>..\\lib\\Acme.Crypto.1.dll</HintPath>\n</Reference>\n", "<Reference Include=\"Acme.Crypto\">\n  <HintPath>..\\lib\\Acme.Crypto.2.dll</HintPath>\n</Reference>\n", ""},
	}
	for _, c := range cases {
		cs, err := Diff(c.path, []byte(c.before), []byte(c.after))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := ""
		for _, ch := range cs {
			if ch.Kind == KindSource || ch.Kind == KindChecksum || ch.Kind == KindRuns {
				got = ch.Kind
				break
			}
		}
		if got != c.want {
			t.Errorf("%s: got %q %+v, want %q", c.name, got, cs, c.want)
		}
	}
}
