package main

import "time"

// A target is one package's security-critical code and the tests that
// hold it: every mutant of the files (and functions) listed is run
// against those tests alone, so that a package whose whole suite takes
// minutes is tested in reasonable time. A mutant that survives them is
// one the tests written for the rule do not catch, whatever the rest of
// the suite does.
type target struct {
	name  string
	pkg   string   // the package's folder, relative to the module root
	files []string // files of pkg to mutate
	// funcs, when set, limits the mutants to the functions whose name
	// (Name, or Recv.Name for a method) matches this regular expression.
	funcs string
	// also lists further files to mutate, each with its own funcs: code
	// of another package that pkg's tests hold too (the rewriter's bounds
	// through the host's loader).
	also []extra
	// run selects pkg's tests (go test -run); skip leaves some out
	// (go test -skip).
	run, skip string
	short     bool
	// timeout bounds one mutant's test run, on top of three times the
	// unmutated run's duration.
	timeout time.Duration
}

type extra struct {
	file  string // relative to the module root
	funcs string
	// match, when set, keeps only the mutants whose original text
	// matches it: the rule's lines of a long function.
	match string
}

// targets are the packages `make mutate` covers, in its order.
var targets = []target{
	{
		name:  "egress",
		pkg:   "host/internal/egress",
		files: []string{"egress.go", "dial.go", "addr.go", "errors.go"},
		// Everything but the formatting helpers of errors.go.
		funcs: `^(Client\.(HostAllowed|Do|requestError|checkURL|checkRedirect|dialContext|control)|newClient|checkMethod|setHeaders|normalizeHost|isASCII|isToken|validHeaderValue|canonicalHostPort|safeMatch|deniedReason|deniedName|isLoopbackName|hasEmptyLabel|endsInNumber|DeniedError\.Is)$`,
		skip:  `^(Fuzz|TestHammer$)`,
	},
	{
		name:  "sandboxfs",
		pkg:   "host/internal/sandboxfs",
		files: []string{"fs.go", "file.go", "budget.go"},
		// Containment (paths, links, special files, read-only mounts,
		// reopened files) and the budget; not the translation of flags,
		// times and reads, which hold no rule.
		funcs: `^(rootName|escapes|FS\.(OpenFile|Lstat|Stat|Mkdir|Chmod|Rename|Rmdir|Unlink|Link|Symlink|Readlink|Utimens|mutable|errno)|file\.(SetAppend|reopen|Write|gap|refundShort|Pwrite|Truncate|Utimens|Close|check)|Budget\.\w+|NewBudget|New|NewWithBudget)$`,
		skip:  `^(Fuzz|TestBudgetHammer$|TestHammer)`,
		short: true,
	},
	{
		name:  "rewrite",
		pkg:   "host/internal/rewrite",
		files: []string{"instrument.go"},
		// What refuses a module: the section scan, its counts and
		// bounds, and the type and global indices that would name
		// what the rewrite appends. The emitted code is held by the
		// behaviour and spec suites, which take minutes per run.
		funcs: `^(instrument|module\.(scan|scanTypes|scanImports|scanGlobals|scanFunctions|scanLocals)|reader\.(typeIndex|limits|tableType|funcType|locals))$`,
		also: []extra{
			{file: "host/internal/rewrite/emit.go", funcs: `^module\.(body|patchGlobal)$`, match: `budgetGlobal|OpcodeError`},
			{file: "host/internal/rewrite/errors.go", funcs: `^(formatError|OpcodeError|uncheckedError)\.Is$`},
		},
		// The corpus round trip alone takes 20 s a run.
		skip:  `^TestRoundTripCorpus$`,
		short: true,
	},
	{
		name: "host",
		pkg:  "host",
		// Fuel and deadlines (fuel.go, the instance's deadline and
		// call checks), fresh state (the snapshot pools and restore),
		// and the load gates (compile, validate, scanModule).
		files: []string{"fuel.go", "instance.go", "snapshot.go", "host.go", "wasmbin.go"},
		funcs: `^(instance\.(refuel|stopIfDue|pause|giveFuel|maxFuel|bookFuel|begin|reset|reusable|pastDeadline|initialize|restore|adopt)|freshPool\.(take|put|get)|profile|Module\.freshPool|Host\.(Load|compile|validate)|scanModule|compiled\.snapshottable)$`,
		// The whole suite in short mode, less the hostile sets (which
		// hold the same limits at length), process isolation, the
		// oracle and fuzzing.
		skip:  `^(Fuzz\w*|TestHostileSetContained|TestRust\w*|TestSpinnersDoNotStallTheProcess|TestSmallAllocationsCountTheirOverhead|TestIsolation\w*|TestExtismOracle|TestWorker\w*)$`,
		short: true,
		also: []extra{
			// A call's own checks: its deadline, fuel and state.
			{file: "host/instance.go", funcs: `^instance\.call$`, match: `[Dd]eadline|ctx\.Err|budget|[Ff]uel|begun|initialized|reusable|closed`},
			{file: "host/internal/rewrite/instrument.go", funcs: `^reader\.typeIndex$`},
			{file: "host/internal/rewrite/emit.go", funcs: `^module\.body$`, match: `budgetGlobal`},
		},
	},
	{
		name:  "registry",
		pkg:   "registry",
		files: []string{"run.go", "grant.go", "call.go"},
		funcs: `^(Run\.(allowed|visible|loaded|Tools|Deferred|Visible|Reachable|Findable|Activate|activate|grant|Call|call)|Registry\.(NewRun|checkConfig)|NarrowGrant|grants\.(of|operatorGrant)|requestGrant|packGrant|checkArgs|CatalogConfig\.validate|activations\.\w+|sessions\.get)$`,
		run:   `^(TestArgumentsAreValidatedBeforeTheGuestRuns|TestDeferredToolsActivateOnFirstUse|TestSessionActivation|TestPolicyHiddenToolsDoNotExist|TestRunOptions\w*|TestRunGrantsNarrow|TestNarrowGrant|TestDisableActivation|TestActivate\w*|TestPerCallConfig\w*|TestPackWithoutASection\w*|TestCheckToolConfig|TestToolSearchOnlyFindableTools|TestCapabilityReachesProviderOnlyWhenEverySideAllowsIt|TestCapabilityRouting|TestFuncErrorsPassThrough|TestCallEvent|TestResultsAreNormalised|TestHugeNumbersInArguments|TestToolSearchConfigIsChecked|TestUnknownAndHiddenNames|TestAlwaysLoadedPatterns|TestHiddenDeferredToolNeedsNoActivation|TestArgumentsTrimmedAndDefaulted|TestNativeToolIgnoresPerCallConfig|TestNarrowGrantEdges|TestIsolationIsTheOperators|TestManifestLimitsHeldToTheDefaults|TestRunServicesAndFuel|TestConcurrentFirstUseActivatesOnce|TestToolErrorKeepsItsCode|TestNarrowGrantKeepsTheEffectiveConfig|TestFailureIsNotCheckedAgainstTheOutputSchema|TestFuncInARegistry|TestBuiltinsRunUnderADeadline|TestArgumentsBeyondTheQuickCheck|TestGrantForAdjustsAsGrantsAreComputed)$`,
	},
	{
		name: "server",
		pkg:  "server",
		// Tenancy (a tenant's tools, packs and sessions), quotas, and
		// authentication (bearer tokens, OAuth tokens and the issuer's
		// keys).
		files: []string{"quota.go", "oauth.go", "jwks.go", "http.go", "server.go", "sessions.go", "tools.go", "skills.go"},
		funcs: `^(quota\.(admit|spend)|bucket\.\w+|newQuota|oauthVerifier\.(verify|tenantOf)|tokenScopes|keySet\.key|pickKey|suits|Server\.(authenticate|admitHTTP|newTenant)|bearer|checkSkillTenants|sessionTable\.(open|enter|count)|session\.(tool|callTool))$`,
		run:   `^(TestAnotherTenants\w*|TestQuota\w*|TestSessionLimits|TestAliasesResolveInsideTheTenant|TestOAuth\w*|TestKeySet\w*|TestDenyTools|TestOwnPacksPrivateWithoutSharedPacks|TestStdioQuotas|TestMemoryQuota|TestFuelAndGuestTimeQuotas|TestTenantsDoNotSeeEachOther|TestAuthAndHost|TestQuotas|TestHostileTenantDoesNotStallAnother|TestSkillToolsTenantIsolation|TestAuditTenantGrant|TestMetricsTenants|TestEngineProvidersReachTenants|TestProviderNotGranted)$`,
		short: true,
	},
	{
		name: "install",
		pkg:  "install",
		// What keeps a source's bytes off the disk unless they are safe,
		// pinned and trusted: the archive's entries, the digests, the
		// lock's check, signatures under the policy, the approval of
		// capabilities and the sources' names.
		files: []string{"unpack.go", "digest.go", "lock.go", "trust.go", "caps.go", "git.go"},
		funcs: `^(unpacker\.(name|claim|claimDir|parents|file|dir|count|tar|zip)|Unpack|contentDigest|parseDigest|checkDigest|ReadLock|Lock\.Check|validName|Policy\.(allowed|checkSignature|Trusts)|Restrict|Capabilities\.Beyond|parseGit)$`,
		also: []extra{
			{file: "install/stage.go", funcs: `^(Installer\.Install|validateUnit|Installer\.lockDir)$`, match: `Beyond|Signer|locked|Approve|CheckModule|ErrNoExport|validName|allowed|checkDigest|ErrUnsigned`},
		},
		run:   `^(TestUnpack\w*|TestContentDigestVectors|TestBuild\w*|TestLockCheckFindsChanges|TestBeyond|TestRestrictAndTrusts|TestSignedInstalls|TestSignerChangeNeedsApproval|TestParseGitSources|TestUpgradeThatAsksForMoreNeedsApproval|TestInstallRefusesWhatDoesNotLoad|TestAKilledInstallIsCleanedUp|TestInstallAFolder|TestInstallChoosesFromASourceOfSeveral|TestInstallAnArchiveURL|TestInstallFromAWellKnownIndex|TestSyncReproducesTheLock|TestRedirectToHTTPAndLockMode|TestInstallAPluginOfAMarketplace|TestReadLockRefusals|TestUninstallNames|TestRequestDigests|TestEntryNameLimits|TestArchiveRootEntries|TestFolderEntries|TestCollisionMessages|TestZipEdges|TestBrokenStreams|TestContentDigestSortsWholePaths|TestLockCheckEdges|TestPolicyHostLists|TestOutdated\w*|TestTrustsAndRestrictEdges|TestSignaturePolicyEdges|TestSourceReadings|TestBeyondEdges|TestLimitsAreInclusive)$`,
		short: true,
	},
	{
		name:  "sign",
		pkg:   "install/sign",
		files: []string{"sign.go"},
		// Whose signature is trusted: keys, revocations, keyless
		// identities.
		funcs: `^(Trust\.(Verify|verify|verifyKeyed|verifyKeyless|verifyKeylessWith)|parsePublic|parsePrivate)$`,
		short: true,
	},
	{
		name: "tenancy",
		pkg:  "tenancy",
		// Whose a pack is, what a tenant may see and use, and what New
		// refuses: the one rule the engine's skills and the server's
		// tools follow.
		files: []string{"tenancy.go"},
		funcs: `^(New|compile|Set\.(Owner|Tenant)|Owner\.(Allows|Tenant)|Tenant\.(Allowed|Allows|RunOptions|RunContext)|ScopeOf|ValidID)$`,
		short: true,
	},
	{
		name:  "packs",
		pkg:   "packs",
		files: []string{"resources.go"},
		// The path rules: skill folders and files and their symbolic
		// links; the module and mount paths of a manifest; the mounts of
		// the operator config.
		funcs: `^(LoadSkillDir|LoadSkillFile|skillWalker\.(walk|readDir|resolve)|readBounded|hashFile)$`,
		also: []extra{
			{file: "packs/manifest.go", funcs: `^Parse$`, match: `ValidPath|m\.Path|Guest`},
			{file: "packs/config.go", funcs: `^tomlReader\.mount$`},
			{file: "internal/confwalk/confwalk.go", funcs: `^Walker\.Path$`},
		},
		skip:  `^(Fuzz|TestBundledPackMatchesModules|TestTinyGo\w*)`,
		short: true,
	},
}
