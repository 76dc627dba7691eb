// hcpops on Azure: a Linux Function App running the Go custom handler, the
// Cosmos DB account it reads and writes (database, Resources and leases
// containers), the storage account the Functions host needs, a Log
// Analytics workspace with an Application Insights component for the logs
// and telemetry, and one user-assigned identity that reaches all of them
// with data-plane roles, so no key or connection string is stored anywhere.
// App Service Authentication (Entra ID) lets only ARM's applications call
// the HTTP functions. monitoring.bicep adds the alert rules (stuck
// operations, ticks, the change feed, notifications, Clusters Service, handler
// restarts), their action group and a workbook; slo.bicep the provisioning
// SLO's burn-rate rules; docs/runbooks.md says what to do when one fires.
//
//   az deployment group create -g <rg> -f deploy/main.bicep \
//     -p clustersServiceUrl=https://clusters-service.example.com \
//        authClientId=<RP app registration id> armClientAppIds='["<ARM app id>"]' \
//        alertReceiver=oncall@example.com
//
// Then zip-deploy dist/functionapp.zip (make package); see docs/functions.md.

targetScope = 'resourceGroup'

@description('Region for every resource.')
param location string = resourceGroup().location

@description('Prefix for resource names: 3 to 11 lower-case letters and digits (storage account names allow only those, 24 at most, and the prefix is followed by 13 unique characters). Upper case is lowered and hyphens dropped where Azure requires.')
@minLength(3)
@maxLength(11)
param namePrefix string = 'hcpops'

// Storage and Cosmos DB account names must be lower case; storage names
// take letters and digits only.
var prefix = toLower(namePrefix)
var compactPrefix = replace(prefix, '-', '')

@description('Function App name (part of its public host name).')
param functionAppName string = '${prefix}-${uniqueString(resourceGroup().id)}'

@description('App Service plan SKU. A dedicated plan keeps the 10-second poll timer warm (Always On).')
@allowed([
  'B1'
  'B2'
  'B3'
  'P0v3'
  'P1v3'
  'P2v3'
])
param planSku string = 'B1'

@description('Cosmos DB account name (globally unique, lower case).')
param cosmosAccountName string = '${prefix}-${uniqueString(resourceGroup().id)}'

@description('Cosmos DB database holding the Resources and leases containers (COSMOS_DATABASE).')
param cosmosDatabaseName string = 'hcpops'

@description('Serverless Cosmos DB suits test deployments; provisioned throughput suits steady load.')
param cosmosServerless bool = true

@description('Refuse Cosmos DB key access, so only Entra identities (the app\'s) can reach the data.')
param cosmosDisableLocalAuth bool = true

@description('Clusters Service base URL (CLUSTERS_SERVICE_URL).')
param clustersServiceUrl string

@description('Host patterns ARM notifications may be posted to (HCPOPS_NOTIFICATION_HOSTS, comma-separated).')
param notificationHosts string = 'management.azure.com'

@description('Upper bound of one poll tick (HCPOPS_POLL_BUDGET); keep it below host.json functionTimeout (5 minutes).')
param pollBudget string = '4m'

@description('Lowest level the handler logs (HCPOPS_LOG_LEVEL): debug, info, warn or error.')
@allowed([
  'debug'
  'info'
  'warn'
  'error'
])
param logLevel string = 'info'

@description('Days Log Analytics keeps the logs and telemetry.')
@minValue(30)
@maxValue(730)
param logRetentionDays int = 30

@description('Application (client) id of the resource provider\'s Entra app registration: the audience ARM requests tokens for.')
param authClientId string

@description('Entra tenant of that app registration.')
param authTenantId string = subscription().tenantId

@description('Audience the tokens must carry: the registration\'s application ID URI.')
param authAudience string = 'api://${authClientId}'

@description('Application ids allowed to call the HTTP functions: ARM\'s, as given to the RP at onboarding (see docs/functions.md). Both App Service Authentication and the handler (HCPOPS_ARM_CLIENT_APP_IDS) check them.')
@minLength(1)
param armClientAppIds array

@description('Extra app settings, e.g. Key Vault references for CLUSTERS_SERVICE_CLIENT_SECRET.')
param extraAppSettings object = {}

// ---- alerting: scheduled-query alert rules over the Application Insights
// component, one action group, a workbook. The queries live in alerts/*.kql
// and are documented, word for word, in docs/functions.md; each rule's
// description links its section of docs/runbooks.md.

@description('Where alerts go: an e-mail address, or an https:// webhook URL (common alert schema). Empty: the rules still fire and show in Azure Monitor, with no action group.')
param alertReceiver string = ''

@description('Base URL of docs/runbooks.md; each alert description links its section here.')
param runbookUrl string = 'https://github.com/hcpops/hcpops/blob/main/docs/runbooks.md'

@description('Minutes after which an active operation is stuck, per kind.request, and "any" for every operation (the backstop). Defaults are ARO-HCP\'s stuck-operation alerts (its end-to-end timeouts). The handler writes operation.stuck at these ages (HCPOPS_STUCK_AFTER), and one alert rule per entry fires for each stuck resource.')
param stuckAfterMinutes object = {
  'cluster.create': 20
  'cluster.update': 45
  'cluster.delete': 25
  'cluster.requestcredential': 10
  'cluster.revokecredentials': 15
  'nodepool.create': 20
  'nodepool.update': 45
  'nodepool.delete': 25
  'externalauth.create': 15
  'externalauth.update': 10
  'externalauth.delete': 15
  any: 60
}

@description('A poll tick using at least this share of HCPOPS_POLL_BUDGET (0 to 1) fires the tick alert, as does a failed tick, one stopped by its budget, or no tick in 15 minutes.')
param tickBudgetUsedThreshold string = '0.8'

@description('Change-feed batches given up in 15 minutes above which the alert fires.')
@minValue(0)
param givenUpBatchesThreshold int = 0

@description('Ticks with a Clusters Service 404 wave (cs.anomaly, verdict wave) in 15 minutes above which the alert fires.')
@minValue(0)
param csAnomalyThreshold int = 0

@description('Failed ARM notification attempts for one operation beyond which the alert fires (a refused notification fires at once).')
@minValue(1)
param notificationAttemptsThreshold int = 5

@description('Clusters Service error rate (0 to 1) over both the last 5 minutes and the last hour above which the alert fires; ARO-HCP alerts on its 99% availability SLO burning 13.44 times too fast, 0.1344.')
param csErrorRateThreshold string = '0.1344'

@description('Clusters Service calls in the last 5 minutes below which the error-rate alert stays quiet.')
@minValue(1)
param csErrorRateMinCalls int = 10

@description('Clusters Service p99 latency (ms) that, exceeded in more than half of the invocations of 15 minutes, fires the latency alert; ARO-HCP\'s CS latency SLO is a p99 of 1 second.')
@minValue(1)
param csLatencyP99MsThreshold int = 1000

@description('Handler starts on one instance in an hour above which the restart alert fires.')
@minValue(1)
param restartsThreshold int = 2

@description('Provisioning SLO: the share of cluster creates that must succeed over 7 days (0 to 1). Two burn-rate rules watch it (slo.bicep: 14.4x over 1h and 5m, 6x over 6h and 30m).')
param provisioningSloTarget string = '0.95'

var storageAccountName = take('${compactPrefix}${uniqueString(resourceGroup().id)}', 24)

// Built-in role ids (the same in every tenant).
var storageBlobDataOwner = 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
var storageQueueDataContributor = '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
var storageTableDataContributor = '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
var cosmosBuiltInDataContributor = '00000000-0000-0000-0000-000000000002'
// "Monitoring Metrics Publisher": lets an Entra identity ingest into
// Application Insights when local (key) authentication is off.
var monitoringMetricsPublisher = '3913510d-42f4-4e42-8a64-420c390055eb'

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: '${prefix}-identity'
  location: location
}

// ---- logs and telemetry: the host's traces and every line the handler
// writes (stdout at Information, stderr at Warning/Error) land in "traces".

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: '${prefix}-logs'
  location: location
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: logRetentionDays
  }
}

resource insights 'Microsoft.Insights/components@2020-02-02' = {
  name: '${prefix}-insights'
  location: location
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    // Keyless: only Entra identities (the app's) may ingest.
    DisableLocalAuth: true
  }
}

resource insightsRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(insights.id, identity.id, monitoringMetricsPublisher)
  scope: insights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', monitoringMetricsPublisher)
    principalId: identity.properties.principalId
    principalType: 'ServicePrincipal'
  }
}

// ---- host storage (timer locks and schedule status, change-feed host state)

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: storageAccountName
  location: location
  kind: 'StorageV2'
  sku: {
    name: 'Standard_LRS'
  }
  properties: {
    minimumTlsVersion: 'TLS1_2'
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    supportsHttpsTrafficOnly: true
  }
}

resource storageRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for role in [storageBlobDataOwner, storageQueueDataContributor, storageTableDataContributor]: {
    name: guid(storage.id, identity.id, role)
    scope: storage
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role)
      principalId: identity.properties.principalId
      principalType: 'ServicePrincipal'
    }
  }
]

// ---- Cosmos DB: the documents ARO-HCP's frontend writes, and the leases of
// the change-feed trigger

resource cosmos 'Microsoft.DocumentDB/databaseAccounts@2024-05-15' = {
  name: cosmosAccountName
  location: location
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    consistencyPolicy: {
      defaultConsistencyLevel: 'Session'
    }
    locations: [
      {
        locationName: location
        failoverPriority: 0
        isZoneRedundant: false
      }
    ]
    capabilities: cosmosServerless ? [
      {
        name: 'EnableServerless'
      }
    ] : []
    disableLocalAuth: cosmosDisableLocalAuth
    minimalTlsVersion: 'Tls12'
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-05-15' = {
  parent: cosmos
  name: cosmosDatabaseName
  properties: {
    resource: {
      id: cosmosDatabaseName
    }
  }
}

// Same shape as ARO-HCP's: hash v2 on /partitionKey (the lower-case
// subscription id), TTL on with no default expiry (operations carry their
// own ttl of 7 days), _etag not indexed.
resource resourcesContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-05-15' = {
  parent: database
  name: 'Resources'
  properties: {
    resource: {
      id: 'Resources'
      partitionKey: {
        paths: [
          '/partitionKey'
        ]
        kind: 'Hash'
        version: 2
      }
      defaultTtl: -1
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          {
            path: '/*'
          }
        ]
        excludedPaths: [
          {
            path: '/"_etag"/?'
          }
        ]
      }
    }
  }
}

// Created here because the trigger may not create it: with an Entra
// identity, creating containers is a control-plane operation it lacks.
resource leasesContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-05-15' = {
  parent: database
  name: 'leases'
  properties: {
    resource: {
      id: 'leases'
      partitionKey: {
        paths: [
          '/id'
        ]
        kind: 'Hash'
      }
    }
  }
}

resource cosmosDataRole 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-05-15' = {
  parent: cosmos
  name: guid(cosmos.id, identity.id, cosmosBuiltInDataContributor)
  properties: {
    roleDefinitionId: '${cosmos.id}/sqlRoleDefinitions/${cosmosBuiltInDataContributor}'
    principalId: identity.properties.principalId
    scope: cosmos.id
  }
}

// ---- the Function App

resource plan 'Microsoft.Web/serverfarms@2023-12-01' = {
  name: '${prefix}-plan'
  location: location
  kind: 'linux'
  sku: {
    name: planSku
  }
  properties: {
    reserved: true // Linux
  }
}

var appSettings = union(
  {
    FUNCTIONS_EXTENSION_VERSION: '~4'
    FUNCTIONS_WORKER_RUNTIME: 'custom'
    WEBSITE_RUN_FROM_PACKAGE: '1'
    AzureWebJobsStorage__accountName: storage.name
    AzureWebJobsStorage__credential: 'managedidentity'
    AzureWebJobsStorage__clientId: identity.properties.clientId
    // "connection": "CosmosDB" in dispatchOperations/function.json; the
    // handler's own Cosmos client reads the same three settings.
    CosmosDB__accountEndpoint: cosmos.properties.documentEndpoint
    CosmosDB__credential: 'managedidentity'
    CosmosDB__clientId: identity.properties.clientId
    COSMOS_DATABASE: cosmosDatabaseName
    CLUSTERS_SERVICE_URL: clustersServiceUrl
    HCPOPS_NOTIFICATION_HOSTS: notificationHosts
    HCPOPS_POLL_BUDGET: pollBudget
    HCPOPS_LOG_LEVEL: logLevel
    HCPOPS_AUTH: 'required'
    HCPOPS_ARM_CLIENT_APP_IDS: join(armClientAppIds, ',')
    // The same thresholds as the stuck alert rules below.
    HCPOPS_STUCK_AFTER: join(map(items(stuckAfterMinutes), t => '${t.key}=${t.value}m'), ',')
    // The host ships its traces and the handler's lines to Application
    // Insights; keyless, as the user-assigned identity.
    APPLICATIONINSIGHTS_CONNECTION_STRING: insights.properties.ConnectionString
    APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identity.properties.clientId};Authorization=AAD'
  },
  extraAppSettings
)

resource functionApp 'Microsoft.Web/sites@2023-12-01' = {
  name: functionAppName
  location: location
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identity.id}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    keyVaultReferenceIdentity: identity.id
    siteConfig: {
      // No language stack: the custom handler is a self-contained binary.
      linuxFxVersion: ''
      alwaysOn: true
      ftpsState: 'Disabled'
      minTlsVersion: '1.2'
      http20Enabled: true
      appSettings: [for s in items(appSettings): {
        name: s.key
        value: string(s.value)
      }]
    }
  }
  dependsOn: [
    storageRoles
    cosmosDataRole
    insightsRole
    resourcesContainer
    leasesContainer
  ]
}

// App Service Authentication in front of the host: a request without a
// valid Entra ID token for the RP's audience, from one of ARM's
// applications, is answered 401 before it reaches the Functions host, and
// the validated caller reaches the handler as X-MS-CLIENT-PRINCIPAL (which
// the handler checks again). The host's readiness ping to the handler and
// the triggers never pass through it, so no path is excluded.
resource authSettings 'Microsoft.Web/sites/config@2023-12-01' = {
  parent: functionApp
  name: 'authsettingsV2'
  properties: {
    platform: {
      enabled: true
    }
    globalValidation: {
      requireAuthentication: true
      unauthenticatedClientAction: 'Return401'
    }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: {
          clientId: authClientId
          openIdIssuer: '${environment().authentication.loginEndpoint}${authTenantId}/v2.0'
        }
        validation: {
          allowedAudiences: [
            authAudience
          ]
          defaultAuthorizationPolicy: {
            allowedApplications: armClientAppIds
          }
        }
      }
    }
    login: {
      tokenStore: {
        enabled: false
      }
    }
  }
}

// ---- alerting: the rules, the action group and the workbook (monitoring.bicep)

module monitoring 'monitoring.bicep' = {
  name: 'monitoring'
  params: {
    prefix: prefix
    location: location
    insightsId: insights.id
    alertReceiver: alertReceiver
    runbookUrl: runbookUrl
    stuckAfterMinutes: stuckAfterMinutes
    tickBudgetUsedThreshold: tickBudgetUsedThreshold
    givenUpBatchesThreshold: givenUpBatchesThreshold
    csAnomalyThreshold: csAnomalyThreshold
    notificationAttemptsThreshold: notificationAttemptsThreshold
    csErrorRateThreshold: csErrorRateThreshold
    csErrorRateMinCalls: csErrorRateMinCalls
    csLatencyP99MsThreshold: csLatencyP99MsThreshold
    restartsThreshold: restartsThreshold
  }
}

// ---- the provisioning SLO's burn-rate rules (slo.bicep)

module slo 'slo.bicep' = {
  name: 'slo'
  params: {
    prefix: prefix
    location: location
    insightsId: insights.id
    actionGroupId: monitoring.outputs.actionGroupId
    runbookUrl: runbookUrl
    sloTarget: provisioningSloTarget
  }
}

output functionAppName string = functionApp.name
output functionAppHostName string = functionApp.properties.defaultHostName
output functionAppUrl string = 'https://${functionApp.properties.defaultHostName}'
output cosmosEndpoint string = cosmos.properties.documentEndpoint
output identityClientId string = identity.properties.clientId
output appInsightsName string = insights.name
output appInsightsId string = insights.id
output logAnalyticsWorkspaceId string = workspace.id
output workbookId string = monitoring.outputs.workbookId
output actionGroupId string = monitoring.outputs.actionGroupId
