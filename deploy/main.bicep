// hcpops on Azure: a Linux Function App running the Go custom handler, the
// Cosmos DB account it reads and writes (database, Resources and leases
// containers), the storage account the Functions host needs, and one
// user-assigned identity that reaches both with data-plane roles, so no key
// or connection string is stored anywhere.
//
//   az deployment group create -g <rg> -f deploy/main.bicep \
//     -p clustersServiceUrl=https://clusters-service.example.com
//
// Then zip-deploy dist/functionapp.zip (make package); see docs/functions.md.

targetScope = 'resourceGroup'

@description('Region for every resource.')
param location string = resourceGroup().location

@description('Prefix for resource names; keep it short (storage names allow 24 lower-case characters).')
@minLength(3)
@maxLength(11)
param namePrefix string = 'hcpops'

@description('Function App name (part of its public host name).')
param functionAppName string = '${namePrefix}-${uniqueString(resourceGroup().id)}'

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
param cosmosAccountName string = '${namePrefix}-${uniqueString(resourceGroup().id)}'

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

@description('Extra app settings, e.g. Key Vault references for CLUSTERS_SERVICE_CLIENT_SECRET.')
param extraAppSettings object = {}

var storageAccountName = take(toLower('${namePrefix}${uniqueString(resourceGroup().id)}'), 24)

// Built-in role ids (the same in every tenant).
var storageBlobDataOwner = 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
var storageQueueDataContributor = '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
var storageTableDataContributor = '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
var cosmosBuiltInDataContributor = '00000000-0000-0000-0000-000000000002'

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: '${namePrefix}-identity'
  location: location
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
  name: '${namePrefix}-plan'
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
    resourcesContainer
    leasesContainer
  ]
}

output functionAppName string = functionApp.name
output functionAppHostName string = functionApp.properties.defaultHostName
output cosmosEndpoint string = cosmos.properties.documentEndpoint
output identityClientId string = identity.properties.clientId
