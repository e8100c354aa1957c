package platform

// WatchHealthy exports watchHealthy to the tests of package platform_test.
const WatchHealthy = watchHealthy
